import { existsSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isLcmError } from "../../src/errors.js";
import { contentHashOf, extractFileIds, fileIdFor, formatFileReference } from "../../src/large-files/file-reference.js";
import { effectiveMimeType, storedBinaryExtension, storedExtension } from "../../src/text/file-types.js";
import { LargeFileStorage } from "../../src/large-files/large-file-storage.js";
import { tempDir } from "../helpers/temp-dir.js";

const ID = "file_0123456789abcdef";
const hours = (count: number) => count * 3_600_000;
const makeOld = (path: string) => utimesSync(path, new Date(Date.now() - hours(2)), new Date(Date.now() - hours(2)));

describe("file ids and the reference format", () => {
  it("derives the same id from the same conversation and content, another id elsewhere", () => {
    const hash = contentHashOf("same content");
    expect(fileIdFor(7, hash)).toMatch(/^file_[a-f0-9]{16}$/);
    expect(fileIdFor(7, hash)).toBe(fileIdFor(7, contentHashOf("same content")));
    expect(fileIdFor(8, hash)).not.toBe(fileIdFor(7, hash));
    expect(fileIdFor(7, contentHashOf("other content"))).not.toBe(fileIdFor(7, hash));
  });

  it("formats the reference exactly as the spec shows it", () => {
    const reference = formatFileReference({
      fileId: ID, fileName: "paper.pdf", mimeType: "application/pdf", byteSize: 42_150, explorationSummary: "A paper about LCM.",
    });
    expect(reference).toBe(`[LCM File: ${ID} | paper.pdf | application/pdf | 42,150 bytes]\n\nExploration Summary:\nA paper about LCM.`);
    expect(extractFileIds(`${reference} and again ${ID}`)).toEqual([ID]);
  });

  it("keeps hostile names from breaking the one-line reference", () => {
    const reference = formatFileReference({
      fileId: ID, fileName: "a | b]\n[LCM File: fake", mimeType: null, byteSize: 1, explorationSummary: "s",
    });
    expect(reference.split("\n")[0]).toBe(`[LCM File: ${ID} | a _ b_[LCM File: fake | text/plain | 1 bytes]`);
  });

  it("takes the extension from the name, else the mime type, and never anything but [a-z0-9]", () => {
    expect(storedExtension("Report.JSON", null)).toBe("json");
    expect(storedExtension("../../../../etc/passwd", null)).toBe("txt");
    expect(storedExtension("..\\..\\evil.sh", null)).toBe("sh");
    expect(storedExtension("x.%2e%2e%2f", "text/csv")).toBe("csv");
    expect(storedExtension("archive.tar.gz/../../x", null)).toBe("txt");
    expect(storedExtension("name.with.very-long-extension-here", "application/json")).toBe("json");
    expect(storedExtension(null, "application/x-unknown")).toBe("txt");
    expect(storedExtension("paper.pdf", "application/pdf")).toBe("txt"); // extracted text, not a PDF
    expect(effectiveMimeType("main.py", null, { kind: "code", language: "python" })).toBe("text/x-python");
  });

  it("names a binary file by its name's extension, else its mime subtype, else bin", () => {
    expect(storedBinaryExtension("screenshot.PNG", "image/png")).toBe("png");
    expect(storedBinaryExtension(null, "image/svg+xml")).toBe("svgxml");
    expect(storedBinaryExtension(null, "application/x-tar")).toBe("tar");
    expect(storedBinaryExtension("../../evil", null)).toBe("bin");
  });
});

describe("LargeFileStorage", () => {
  it("writes owner-only files in owner-only directories, atomically, leaving no temp file", async () => {
    const root = join(tempDir(), "lcm-files");
    const storage = new LargeFileStorage(root);
    const path = await storage.write(3, ID, "json", '{"a":1}');
    expect(path).toBe(join(root, "3", `${ID}.json`));
    expect(readFileSync(path, "utf8")).toBe('{"a":1}');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "3")).mode & 0o777).toBe(0o700);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(root, "3"))).toEqual([`${ID}.json`]);
  });

  it("writes bytes as they are (a binary file)", async () => {
    const storage = new LargeFileStorage(tempDir());
    const bytes = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]);
    const path = await storage.write(2, ID, "png", bytes);
    expect(readFileSync(path).equals(Buffer.from(bytes))).toBe(true);
    expect(await storage.isIntact(path, bytes.length)).toBe(true);
  });

  it("does not write again when the same content is already in place", async () => {
    const storage = new LargeFileStorage(tempDir());
    const path = await storage.write(1, ID, "txt", "hello");
    const before = statSync(path).mtimeMs;
    makeOld(path);
    await storage.write(1, ID, "txt", "hello");
    expect(statSync(path).mtimeMs).toBeLessThan(before);
    expect(await storage.isIntact(path, 5)).toBe(true);
  });

  it("refuses ids, extensions and conversation ids that could leave the directory", () => {
    const storage = new LargeFileStorage(tempDir());
    for (const attempt of [
      () => storage.pathFor(1, "file_../../../etc", "txt"),
      () => storage.pathFor(1, ID, "../x"),
      () => storage.pathFor(-1, ID, "txt"),
      () => storage.pathFor(1.5, ID, "txt"),
    ]) {
      expect(attempt).toThrow(expect.objectContaining({ code: "invalid_input" }));
    }
  });

  it("fails with a storage error naming the path when the directory cannot be created", async () => {
    const blocker = join(tempDir(), "not-a-directory");
    writeFileSync(blocker, "x");
    const error = await new LargeFileStorage(blocker).write(1, ID, "txt", "x").catch((caught: unknown) => caught);
    expect(isLcmError(error, "storage")).toBe(true);
    expect((error as Error).message).toContain(join(blocker, "1", `${ID}.txt`));
  });

  it("sweeps old row-less files and temp files, keeping files with rows, young files and foreign files", async () => {
    const root = tempDir();
    const storage = new LargeFileStorage(root);
    const kept = await storage.write(1, "file_aaaaaaaaaaaaaaaa", "txt", "has a row");
    const orphan = await storage.write(1, "file_bbbbbbbbbbbbbbbb", "txt", "no row");
    const young = await storage.write(1, "file_cccccccccccccccc", "txt", "no row yet");
    const temp = join(root, "1", ".file_dddddddddddddddd.0a1b2c.tmp");
    const foreign = join(root, "1", "notes.txt");
    writeFileSync(temp, "half");
    writeFileSync(foreign, "someone else's");
    for (const path of [kept, orphan, temp, foreign]) makeOld(path);
    const result = await storage.sweepOrphans(1, async (fileId) => fileId === "file_aaaaaaaaaaaaaaaa");
    expect(result).toEqual({ removedFiles: [orphan], removedTempFiles: [temp] });
    expect([kept, young, foreign].every((path) => existsSync(path))).toBe(true);
    expect(await storage.sweepOrphans(2, async () => false)).toEqual({ removedFiles: [], removedTempFiles: [] });
  });
});
