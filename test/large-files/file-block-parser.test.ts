import { describe, expect, it } from "vitest";
import { parseFileBlocks, replaceFileBlocks } from "../../src/large-files/file-block-parser.js";

describe("parseFileBlocks", () => {
  it("parses the media-understanding form: name and mime, content framed by newlines", () => {
    const text = 'Look at this\n<file name="paper.pdf" mime="application/pdf">\nline one\nline two\n</file>\nthanks';
    const [block, ...rest] = parseFileBlocks(text);
    expect(rest).toEqual([]);
    expect(block).toMatchObject({ fileName: "paper.pdf", mimeType: "application/pdf", content: "line one\nline two" });
    expect(text.slice(block!.start, block!.end)).toBe('<file name="paper.pdf" mime="application/pdf">\nline one\nline two\n</file>');
  });

  it("parses the API form without a mime type", () => {
    expect(parseFileBlocks('<file name="notes.md">\n# Notes\n</file>')[0]).toMatchObject({ fileName: "notes.md", mimeType: null, content: "# Notes" });
  });

  it("accepts attributes in any order, single quotes, no quotes, extra attributes and entities", () => {
    const blocks = parseFileBlocks(
      [
        "<file mime=\"text/csv\" name=\"a.csv\">x</file>",
        "<file name='b c.json' mime='application/json' truncated=\"false\">y</file>",
        "<file name=d.txt mime=text/plain>z</file>",
        '<FILE NAME="Tom &amp; Jerry &quot;2&quot;.txt">w</FILE>',
        '<file   name = "spaced.log"   >v</file>',
      ].join("\n"),
    );
    expect(blocks.map((block) => [block.fileName, block.mimeType, block.content])).toEqual([
      ["a.csv", "text/csv", "x"],
      ["b c.json", "application/json", "y"],
      ["d.txt", "text/plain", "z"],
      ['Tom & Jerry "2".txt', null, "w"],
      ["spaced.log", null, "v"],
    ]);
    expect(blocks[1]!.attributes).toEqual({ name: "b c.json", mime: "application/json", truncated: "false" });
  });

  it("finds several blocks in one message, in order, with the text between them untouched", () => {
    const text = 'a <file name="1.txt">one</file> b <file name="2.txt">two</file> c';
    const blocks = parseFileBlocks(text);
    expect(blocks.map((block) => block.content)).toEqual(["one", "two"]);
    expect(replaceFileBlocks(text, blocks, (block) => `[${block.fileName}]`)).toBe("a [1.txt] b [2.txt] c");
  });

  it("keeps a block whose own text contains </file> whole when no other block follows", () => {
    const code = 'const close = "</file>";\nreturn `${open}${body}${close}`;';
    const [block] = parseFileBlocks(`<file name="builder.ts">\n${code}\n</file>\nWhat does it do?`);
    expect(block!.content).toBe(code);
  });

  it("matches nested tags in a source file that itself builds file blocks", () => {
    const code = 'parts.push(`<file name="${name}">\\n${text}\\n</file>`);';
    const text = `<file name="compose.ts">\n${code}\n</file> and <file name="b.txt">bee</file>`;
    expect(parseFileBlocks(text).map((block) => [block.fileName, block.content])).toEqual([
      ["compose.ts", code],
      ["b.txt", "bee"],
    ]);
  });

  it("ignores unclosed blocks, self-closing tags and look-alike tags", () => {
    expect(parseFileBlocks('<file name="x.txt">never closed')).toEqual([]);
    expect(parseFileBlocks('<file name="img.png"/> and <filename>x</filename>')).toEqual([]);
    expect(parseFileBlocks("no blocks at all")).toEqual([]);
  });

  it("leaves the text unchanged when the replacement declines every block", () => {
    const text = 'x <file name="a">1</file> y';
    expect(replaceFileBlocks(text, parseFileBlocks(text), () => null)).toBe(text);
  });

  it("strips exactly one framing newline on each side, including CRLF", () => {
    expect(parseFileBlocks("<file name=a>\r\n\r\nbody\r\n\r\n</file>")[0]!.content).toBe("\r\nbody\r\n");
  });
});
