/**
 * lcm_grep scope "files": search inside stored large files through the registered tool, then read around a hit
 * with lcm_describe by line, as the model would.
 */
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { FileDescription } from "../../src/retrieval/describe.js";
import type { FileMatch, GrepMatch } from "../../src/search/grep.js";
import { fileBlock } from "../large-files/generated-inputs.js";
import { userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, OTHER_AGENT, sessionOf, textOf, type RecallEnv } from "../helpers/recall.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";

interface FileGrepDetails {
  matchCount: number;
  matches: FileMatch[];
  scope: string;
  truncated: boolean;
  limitReached: boolean;
  filesInScope: number;
  searchedFiles: number;
  unavailableFiles?: { fileId: string; fileName: string | null; status: string; reason: string }[];
  note?: string;
  status?: string;
  parameter?: string;
}

/** 400 log lines; line 137 holds the needle, every 50th line an ERROR; line 300 has regex metacharacters. */
const APP_LOG = Array.from({ length: 400 }, (_, index) => {
  const line = index + 1;
  if (line === 137) return `2026-11-03T08:13:07Z ERROR ERR_LEDGER_TIMEOUT upstream ledger-7 did not answer (ticket OPS-4471)`;
  if (line === 300) return `2026-11-03T09:00:00Z INFO  price (a+b)*2 computed for invoice 300`;
  return `2026-11-03T08:${String(line % 60).padStart(2, "0")}:00Z ${line % 50 === 0 ? "ERROR" : "INFO "} processed batch ${line} size=${line * 3}`;
}).join("\n");
/** Files are stamped with the clock at ingest; newest-first order needs distinct times. */
const nextMillisecond = () => new Promise((resolve) => setTimeout(resolve, 3));

const NOTES = Array.from({ length: 120 }, (_, index) => `note ${index + 1}: the Staging Deploy checklist item ${index + 1}`).join("\n");

describe("lcm_grep scope files", () => {
  let env: RecallEnv;
  let logId: string;
  let notesId: string;
  const grep = async (params: Record<string, unknown>, session = MAIN) =>
    detailsOf<FileGrepDetails>(await env.call("lcm_grep", { scope: "files", ...params }, session));
  const fileIdOf = (name: string) => env.db.get<{ file_id: string }>("SELECT file_id FROM large_files WHERE file_name = ?", name)!.file_id;

  beforeAll(async () => {
    env = createRecallEnv({ config: { largeFileTokenThreshold: 100 } });
    await env.commit(MAIN, [userMessage(`here is the log\n${fileBlock("app.log", "text/plain", APP_LOG)}`)]);
    await nextMillisecond();
    await env.commit(MAIN, [userMessage(`and my notes\n${fileBlock("notes.md", "text/markdown", NOTES)}`)]);
    await env.commit(sessionOf("main", "second"), [userMessage(fileBlock("other.log", "text/plain", APP_LOG.replace("OPS-4471", "OPS-9999")))]);
    await env.commit(OTHER_AGENT, [userMessage(fileBlock("ops.log", "text/plain", APP_LOG.replace("OPS-4471", "OPS-SECRET-1")))]);
    logId = fileIdOf("app.log");
    notesId = fileIdOf("notes.md");
  });

  it("finds a line inside a stored file, with where it is and how to read around it", async () => {
    const result = await grep({ pattern: "ERR_[A-Z]+_TIMEOUT" });
    expect(result).toMatchObject({ scope: "files", matchCount: 1, truncated: false, limitReached: false, filesInScope: 2, searchedFiles: 2 });
    expect(result.matches[0]).toEqual({
      type: "file", id: logId, fileId: logId, fileName: "app.log", conversationId: env.conversationId(MAIN),
      lineNumber: 137, column: 28, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      snippet: "2026-11-03T08:13:07Z ERROR «ERR_LEDGER_TIMEOUT» upstream ledger-7 did not answer (ticket OPS-4471)",
      hint: `lcm_describe(id: ${logId}, startLine: 127)`,
    });
  });

  it("reads the lines around a hit with lcm_describe by line, as the hint says", async () => {
    const [hit] = (await grep({ pattern: "OPS-4471" })).matches;
    const page = detailsOf<FileDescription>(await env.call("lcm_describe", { id: hit!.fileId, startLine: 127, maxLines: 21 }));
    expect(page.content).toMatchObject({ unit: "lines", startLine: 127, endLine: 147, totalLines: 400, nextStartLine: 148 });
    expect(page.content!.text.split("\n")[10]).toContain("ERR_LEDGER_TIMEOUT");
  });

  it("matches full_text as one literal phrase, ignoring case, regex characters included", async () => {
    const literal = await grep({ pattern: "PRICE (A+B)*2", mode: "full_text" });
    expect(literal.matches.map((match) => [match.fileName, match.lineNumber])).toEqual([["app.log", 300]]);
    expect(literal.matches[0]!.snippet).toContain("«price (a+b)*2»");
    const quoted = await grep({ pattern: '"staging deploy checklist item 7"', mode: "full_text" });
    expect(quoted.matches.map((match) => match.lineNumber)).toEqual([7, 70, 71, 72, 73, 74, 75, 76, 77, 78, 79]);
    expect(quoted.note).toMatch(/literal phrase/);
  });

  it("searches the newest file first and stops at limit, saying more exist", async () => {
    const result = await grep({ pattern: "\\d", limit: 5 });
    expect(result.matches.map((match) => [match.fileId, match.lineNumber])).toEqual([1, 2, 3, 4, 5].map((line) => [notesId, line]));
    expect(result).toMatchObject({ limitReached: true, truncated: false, note: expect.stringMatching(/Stopped at limit \(5 matches\); more exist/) });
  });

  it("applies the message-search regex policy before any file is read", async () => {
    const cases: [string, RegExp][] = [
      ["(a+)+$", /repeats a group that itself repeats/],
      ["(ERROR) \\1", /backreference/],
      ["x".repeat(501), /the limit is 500/],
      ["(unclosed", /not a valid JavaScript regular expression/],
    ];
    for (const [pattern, message] of cases) {
      const result = await env.call("lcm_grep", { pattern, scope: "files" });
      expect(detailsOf<FileGrepDetails>(result), pattern).toMatchObject({ status: "error", parameter: "pattern" });
      expect(textOf(result)).toMatch(message);
    }
    expect(await grep({ pattern: '""', mode: "full_text" })).toMatchObject({ status: "error", parameter: "pattern" });
  });

  it("cuts off a slow pattern at the search budget in a worker, keeping the event loop running", async () => {
    const slow = sessionOf("main", "slow");
    await env.commit(slow, [userMessage(fileBlock("slow.txt", null, Array.from({ length: 200 }, () => `${"a".repeat(40)}b`).join("\n")))]);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const started = performance.now();
    const result = await grep({ pattern: "(a|aa)+$" }, slow);
    clearInterval(ticker);
    expect(result).toMatchObject({ truncated: true, note: expect.stringMatching(/Stopped early: the 3000 ms search budget ran out in file 1 of 1/) });
    expect(performance.now() - started).toBeLessThan(6_000);
    expect(ticks).toBeGreaterThanOrEqual(50);
  });

  it("filters files by when they were stored", async () => {
    expect((await grep({ pattern: "OPS", since: "2000-01-01" })).matches).toHaveLength(1);
    const future = await grep({ pattern: "OPS", since: "2999-01-01" });
    expect(future).toMatchObject({ matchCount: 0, filesInScope: 0, note: expect.stringMatching(/No large files/) });
  });

  it("reads another conversation of the agent when asked, never another agent's files", async () => {
    const all = await grep({ pattern: "OPS-[A-Z0-9-]+", allConversations: true });
    expect(all.matches.map((match) => match.snippet.match(/«(.*)»/)![1]).sort()).toEqual(["OPS-4471", "OPS-9999"]);
    expect(JSON.stringify(all)).not.toContain("SECRET");
    const fromOps = await grep({ pattern: "OPS-SECRET" }, OTHER_AGENT);
    expect(fromOps.matches).toHaveLength(1);
  });

  it("lists missing and unreadable files instead of failing the call", async () => {
    const broken = createRecallEnv({ config: { largeFileTokenThreshold: 100 } });
    await broken.commit(MAIN, [userMessage(fileBlock("gone.log", null, APP_LOG))]);
    await nextMillisecond();
    await broken.commit(MAIN, [userMessage(fileBlock("replaced.log", null, APP_LOG.replace("OPS-4471", "OPS-4472")))]);
    await nextMillisecond();
    await broken.commit(MAIN, [userMessage(fileBlock("fine.log", null, APP_LOG.replace("OPS-4471", "OPS-4473")))]);
    const pathOf = (name: string) =>
      resolveRecordedPath(broken.db.path, broken.db.get<{ storage_path: string }>("SELECT storage_path FROM large_files WHERE file_name = ?", name)!.storage_path);
    rmSync(pathOf("gone.log"));
    // A directory where the file was: unreadable even to root (a permission change is not, and these machines run as root).
    rmSync(pathOf("replaced.log"));
    mkdirSync(pathOf("replaced.log"));
    const result = detailsOf<FileGrepDetails>(await broken.call("lcm_grep", { pattern: "OPS-447\\d", scope: "files" }));
    expect(result.matches.map((match) => match.fileName)).toEqual(["fine.log"]);
    expect(result.unavailableFiles).toEqual([
      { fileId: expect.any(String), fileName: "replaced.log", status: "unreadable", reason: `not readable (not a regular file) at ${pathOf("replaced.log")}` },
      { fileId: expect.any(String), fileName: "gone.log", status: "missing", reason: expect.stringMatching(/missing/) },
    ]);
    expect(result.note).toMatch(/could not be searched; see unavailableFiles/);
    expect(textOf(await broken.call("lcm_grep", { pattern: "OPS", scope: "files" }))).toContain('"unavailableFiles"');
  });

  // Root passes every permission check, so this case cannot be made under root: it is skipped there, visibly.
  it.skipIf(process.getuid?.() === 0)("lists a file it has no permission to read as unreadable", async () => {
    const locked = createRecallEnv({ config: { largeFileTokenThreshold: 100 } });
    await locked.commit(MAIN, [userMessage(fileBlock("locked.log", null, APP_LOG))]);
    const path = locked.db.get<{ storage_path: string }>("SELECT storage_path FROM large_files")!.storage_path;
    chmodSync(path, 0o000);
    try {
      const result = detailsOf<FileGrepDetails>(await locked.call("lcm_grep", { pattern: "OPS-447\\d", scope: "files" }));
      expect(result.matches).toEqual([]);
      expect(result.unavailableFiles).toEqual([
        { fileId: expect.any(String), fileName: "locked.log", status: "unreadable", reason: expect.stringMatching(/permission denied/) },
      ]);
    } finally {
      chmodSync(path, 0o600);
    }
  });

  it("finds a line inside a stored file with the default scope, on the message that holds the file, in either mode", async () => {
    for (const mode of ["regex", "full_text"] as const) {
      const result = detailsOf<{ scope: string; matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern: "ERR_LEDGER_TIMEOUT", mode }));
      expect(result.scope).toBe("both");
      expect(result.matches).toHaveLength(1);
      expect(result.matches[0]).toMatchObject({
        type: "message", seq: 1, role: "user", conversationId: env.conversationId(MAIN),
        inFile: { fileId: logId, fileName: "app.log", line: 137, read: `lcm_describe(id: ${logId}, startLine: 127)` },
      });
      expect(result.matches[0]!.snippet).toContain("ERR_LEDGER_TIMEOUT");
    }
    // The byte offset is where the match starts in the stored file.
    const [hit] = detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern: "ERR_LEDGER_TIMEOUT" })).matches;
    const offset = hit!.type === "message" ? hit!.inFile!.byteOffset : -1;
    expect(Buffer.from(APP_LOG).subarray(offset, offset + 18).toString()).toBe("ERR_LEDGER_TIMEOUT");
    // Another agent's stored file stays private.
    const ops = detailsOf<{ matches: GrepMatch[] }>(await env.call("lcm_grep", { pattern: "OPS-SECRET-1" }));
    expect(ops.matches).toEqual([]);
  });
});
