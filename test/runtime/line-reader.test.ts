/**
 * The byte-exact line reader (src/runtime/line-reader.ts) on hostile input: only a line feed ends a line, every byte
 * is counted where it is, whatever it decodes to.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fileLines, type InputLine, readLines } from "../../src/runtime/line-reader.js";
import { tempDir } from "../helpers/temp-dir.js";

async function all(lines: AsyncIterable<InputLine>): Promise<InputLine[]> {
  const result: InputLine[] = [];
  for await (const line of lines) result.push(line);
  return result;
}

/** The input cut into chunks of `size` bytes, as a file stream delivers it. */
function chunked(bytes: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) chunks.push(bytes.subarray(offset, offset + size));
  return chunks;
}

describe("readLines", () => {
  it("keeps U+2028, U+2029, a lone CR and a NUL inside their line, and counts their bytes exactly", async () => {
    const records = [{ text: "a\u2028b" }, { text: "c\u2029d" }, { text: "nul\u0000here" }];
    const input = Buffer.concat([
      Buffer.from(`${JSON.stringify(records[0])}\n`),
      Buffer.from(`${JSON.stringify(records[1])}\n`),
      Buffer.from('{"text":"lone\rcr"}\n'), // a raw CR inside the line (JSON.parse refuses it; the line stays whole)
      Buffer.from(`${JSON.stringify(records[2])}\n`),
    ]);
    for (const size of [1, 2, 3, 7, input.length]) {
      const lines = await all(readLines(chunked(input, size)));
      expect(lines.map((line) => line.text.length > 0)).toEqual([true, true, true, true]);
      expect(JSON.parse(lines[0]!.text)).toEqual(records[0]);
      expect(JSON.parse(lines[1]!.text)).toEqual(records[1]);
      expect(lines[2]!.text).toBe('{"text":"lone\rcr"}');
      expect(JSON.parse(lines[3]!.text)).toEqual(records[2]);
      // Offsets chain and end at the input's length: a cursor taken at any line end is a real line start.
      expect(lines[0]!.start).toBe(0);
      for (let index = 1; index < lines.length; index++) expect(lines[index]!.start).toBe(lines[index - 1]!.end);
      expect(lines.at(-1)!.end).toBe(input.length);
    }
  });

  it("drops one CR before the line feed (CRLF files) but counts it", async () => {
    const input = Buffer.from('{"a":1}\r\n{"b":2}\r\n');
    const lines = await all(readLines([input]));
    expect(lines.map((line) => [line.text, line.start, line.end])).toEqual([['{"a":1}', 0, 9], ['{"b":2}', 9, 18]]);
  });

  it("counts invalid UTF-8 by its bytes, not by what it decodes to", async () => {
    // 0xFF and a cut three-byte sequence decode to U+FFFD (three bytes when encoded again): the offsets must not grow.
    const input = Buffer.concat([Buffer.from('{"t":"'), Buffer.from([0xff, 0xe2, 0x80]), Buffer.from('"}\n{"u":1}\n')]);
    const lines = await all(readLines(chunked(input, 4)));
    expect(lines[0]!.end).toBe(input.indexOf(0x0a) + 1);
    expect(lines[1]!.start).toBe(lines[0]!.end);
    expect(lines[1]!.text).toBe('{"u":1}');
  });

  it("returns a line of several megabytes whole, whatever the chunk size", async () => {
    const long = JSON.stringify({ text: `${"x".repeat(5_000_000)}\u2028end` });
    const input = Buffer.from(`${long}\n{"next":true}\n`);
    const lines = await all(readLines(chunked(input, 65_536)));
    expect(lines).toHaveLength(2);
    expect(lines[0]!.text).toBe(long);
    expect(lines[1]).toMatchObject({ text: '{"next":true}', start: Buffer.byteLength(long) + 1, terminated: true });
  });

  it("marks a last line without a line feed as not terminated", async () => {
    const lines = await all(readLines([Buffer.from('{"a":1}\n{"b":')]));
    expect(lines.map((line) => [line.text, line.terminated])).toEqual([['{"a":1}', true], ['{"b":', false]]);
  });

  it("reads a file from a byte offset with offsets relative to the whole file", async () => {
    const path = join(tempDir(), "t.jsonl");
    writeFileSync(path, '{"a":"\u2028"}\n{"b":2}\n{"c":3}\n');
    const first = await all(fileLines(path));
    const rest = await all(fileLines(path, { start: first[0]!.end }));
    expect(rest.map((line) => [line.text, line.start])).toEqual([['{"b":2}', first[1]!.start], ['{"c":3}', first[2]!.start]]);
    const bounded = await all(fileLines(path, { start: 0, end: first[1]!.end }));
    expect(bounded.map((line) => line.text)).toEqual(['{"a":"\u2028"}', '{"b":2}']);
  });
});
