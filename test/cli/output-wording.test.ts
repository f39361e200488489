/**
 * What the operator reads: `describe` prints text in human mode (not the engine's JSON), and a file page names the
 * CLI's flags (`--start-line`, `--offset`), not the tool's parameters; `--format` says it is required; a backup into
 * a folder that does not exist is bad usage with the fix; `context` shows a message with a null content block;
 * counts of one are singular ("1 stored file").
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { GrepOutput } from "../../src/cli/commands/recall-commands.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { GrepOutputSchema } from "../../src/cli/output-schemas.js";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { fileBlock } from "../large-files/generated-inputs.js";
import { userMessage } from "../helpers/messages.js";
import { tempDatabasePath, tempDir } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

/** 400 numbered lines: a file well above the 100-token threshold used below. */
const LOG = Array.from({ length: 400 }, (_, index) => `line ${index + 1}: request ${index} served in ${index % 17} ms`).join("\n");

let db: string;
let summaryId: string;
let fileId: string;

beforeAll(async () => {
  db = tempDatabasePath();
  const harness = await buildDatabase({
    databasePath: db, compact: true, config: { largeFileTokenThreshold: 100 },
    sessions: [
      { sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(40, 30, "w") },
      { sessionKey: "agent:main:files", sessionId: "s2", messages: [userMessage(fileBlock("server.log", "text/plain", LOG))] },
      // OpenClaw's messages may carry a null in a content array.
      { sessionKey: "agent:main:odd", sessionId: "s3", messages: [{ role: "user", content: [null, { type: "text", text: "hello after a null block" }], timestamp: Date.now() } as unknown as AgentMessage] },
    ],
  });
  summaryId = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'leaf' ORDER BY id LIMIT 1")!.summary_id;
  fileId = harness.db.get<{ file_id: string }>("SELECT file_id FROM large_files")!.file_id;
  closeSharedDatabase(db);
}, 120_000);

describe("lcm describe in human mode", () => {
  it("prints a summary as text: what it is, where it sits, its content", async () => {
    const run = await runLcm(["describe", summaryId, "--db", db]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(new RegExp(`^${summaryId}: leaf summary, depth 0, conversation 1\\n[\\d,]+ tokens from [\\d,]+ tokens: \\d+ messages, seq \\d+-\\d+, `));
    expect(run.stdout).toMatch(/\nPlace: (in the model's context now|condensed into sum_[0-9a-f]{16}).*; source messages \d+-\d+\n/);
    expect(run.stdout).toMatch(new RegExp(`\\nMore: lcm expand ${summaryId} \\(the detail below it\\)\\n$`));
    expect(run.stdout).not.toMatch(/^\{|"type": "summary"|"sourceMessageIds"/m);
  });

  it("pages a file by lines and names --start-line for the next page", async () => {
    const run = await runLcm(["describe", fileId, "--max-lines", "50", "--db", db]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(new RegExp(`^${fileId}: server\\.log · text/plain · [\\d.]+ KB \\([\\d,]+ tokens\\) · conversation 2 · stored from a file block `));
    expect(run.stdout).toMatch(/\nExploration summary:\n/);
    expect(run.stdout).toMatch(/\nline 50: request 49 served in 15 ms\n\nShowing lines 1-50 of 400; run again with --start-line 51 for more\.\n$/);
    expect(run.stdout).not.toMatch(/startLine/);
  });

  it("pages a file by bytes and names --offset for the next page", async () => {
    const run = await runLcm(["describe", fileId, "--max-bytes", "1000", "--db", db]);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/\nShowing bytes 0-\d+ of \d+; run again with --offset \d+ for more\.\n$/);
  });

  it("names the flag when a page is past the end of the file", async () => {
    const run = await runLcm(["describe", fileId, "--start-line", "900", "--db", db]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(`lcm describe: --start-line: ${fileId} has 400 lines; --start-line 900 is past the end.\n`);
  });
});

describe("small things an operator trips over", () => {
  it("marks --format and --out of lcm export as required", async () => {
    const help = (await runLcm(["export", "--help"])).stdout;
    expect(help).toMatch(/--format <format>\s+required: jsonl or markdown/);
    expect(help).toMatch(/--out <path>\s+required: the file to write/);
  });

  it("refuses a backup into a folder that does not exist as bad usage, with the fix", async () => {
    const folder = join(tempDir(), "not", "there");
    const run = await runLcm(["backup", join(folder, "copy.db"), "--db", db]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(`lcm backup: The folder of the backup target, ${folder}, does not exist. Create it first (mkdir -p ${folder}) or choose another path.\n`);
  });

  it("shows a message whose content holds a null block", async () => {
    const run = await runLcm(["context", "3", "--full", "--db", db]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/\n#1 user · \d+ tokens\nhello after a null block\n/);
  });

  it("says 1 stored file, not 1 stored file(s)", async () => {
    const copy = tempDatabasePath();
    const harness = await buildDatabase({
      databasePath: copy, config: { largeFileTokenThreshold: 100 },
      sessions: [{ sessionKey: "agent:main:files", sessionId: "s2", messages: [userMessage(fileBlock("gone.log", "text/plain", LOG))] }],
    });
    rmSync(resolveRecordedPath(copy, harness.db.get<{ storage_path: string }>("SELECT storage_path FROM large_files")!.storage_path));
    closeSharedDatabase(copy);
    const data = await runJson<GrepOutput>(["grep", "request 7", "--scope", "files", "--db", copy], GrepOutputSchema);
    expect(data.note).toMatch(/^1 stored file could not be searched; see unavailableFiles\./);
    expect((await runLcm(["grep", "request 7", "--scope", "files", "--db", copy])).stdout).toMatch(/^0 matches for "request 7" \(regex, files\) in 1 conversation\n/);
  });
});
