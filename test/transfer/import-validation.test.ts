/**
 * `lcm import jsonl` on hostile exports: every file that used to pass the check and then fail while writing (leaving a
 * conversation stuck "in progress"), or import and break the database afterwards (unreadable JSON, out-of-range
 * times, broken invariants), is refused with a message saying what and where, and the target database is unchanged:
 * no row, no stored file, no conversation left in progress. Then U+2028/U+2029 and the other hostile characters
 * travel through export and import whole.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ExportOutputSchema, ImportJsonlOutputSchema } from "../../src/cli/output-schemas.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { buildDatabase, exchanges, runJson, runLcm } from "../cli/cli-harness.js";
import { hostileTranscript } from "../fixtures/hostile-transcript.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

type Line = Record<string, unknown> & { type: string };

let exported: Line[][] = [];

/** Two compacted conversations of two sessions, exported: one array of records per conversation. */
beforeAll(async () => {
  const dir = tempDir();
  const databasePath = join(dir, "source.db");
  await buildDatabase({
    databasePath, compact: true,
    sessions: [
      { sessionKey: "agent:main:one", sessionId: "s1", messages: exchanges(60, 20, "a") },
      { sessionKey: "agent:main:two", sessionId: "s2", messages: exchanges(40, 20, "b") },
    ],
  });
  for (const id of [1, 2]) {
    const file = join(dir, `c${id}.jsonl`);
    await runJson(["export", String(id), "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    exported.push(readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line) as Line));
  }
}, 120_000);

/** A target database holding one conversation of its own, and its files folder. */
async function target() {
  const dir = tempDir();
  const databasePath = join(dir, "target.db");
  await buildDatabase({ databasePath, sessions: [{ sessionKey: "agent:main:mine", sessionId: "mine", messages: exchanges(5, 5, "m") }] });
  return { dir, databasePath };
}

/** Every row of every table the import writes, and the files beside the database: what "nothing changed" compares. */
function contents(databasePath: string, dir: string) {
  const db = openDatabase(databasePath);
  try {
    const tables = ["conversations", "messages", "message_parts", "summaries", "summary_messages", "summary_parents", "context_items", "large_files", "retention_archives"];
    return {
      rows: Object.fromEntries(tables.map((table) => [table, db.all(`SELECT * FROM ${table} ORDER BY 1, 2`)])),
      files: readdirSync(dir, { recursive: true }).map(String).filter((name) => !/\.db(-wal|-shm)?$/.test(name)).sort(),
    };
  } finally {
    db.close();
  }
}

function write(records: Line[]): string {
  const file = join(tempDir(), "hostile.jsonl");
  writeFileSync(file, records.map((record) => `${JSON.stringify(record)}\n`).join(""));
  return file;
}

const clone = (records: Line[]) => records.map((record) => JSON.parse(JSON.stringify(record)) as Line);
const first = () => clone(exported[0]!);
const messages = (records: Line[]) => records.filter((record) => record.type === "message");

/** Imports `records` into a fresh target: refused with exit 2 and `reason`, and the target unchanged. */
async function expectRefused(records: Line[], reason: RegExp) {
  const { dir, databasePath } = await target();
  const before = contents(databasePath, dir);
  const run = await runLcm(["import", "jsonl", write(records), "--db", databasePath, "--apply"]);
  expect([run.code, run.stderr]).toEqual([EXIT.usage, expect.stringMatching(reason)]);
  expect(run.stderr).toMatch(/Nothing was imported/);
  expect(contents(databasePath, dir)).toEqual(before);
}

describe("lcm import jsonl refuses a file that would fail after writing, and changes nothing", () => {
  it("a message identity twice in a block (the second was silently dropped, then the block stuck in progress)", async () => {
    const records = first();
    const [one, two] = messages(records);
    two!.identityKey = one!.identityKey;
    await expectRefused(records, /message 2 has the identity of an earlier message/);
  });

  it("one summary id in two blocks of the file", async () => {
    const one = first();
    const two = clone(exported[1]!);
    const shared = one.find((record) => record.type === "summary")!.summaryId as string;
    const renamed = two.find((record) => record.type === "summary")!;
    const old = renamed.summaryId as string;
    for (const record of two) {
      if (record.summaryId === old) record.summaryId = shared;
      for (const edge of (record.sourceSummaries as { summaryId: string }[] | undefined) ?? []) if (edge.summaryId === old) edge.summaryId = shared;
    }
    await expectRefused([...one, ...two], new RegExp(`summary ${shared} belongs to conversation main/s1 too`));
  });

  it("a summary id the target holds in another conversation", async () => {
    const { dir, databasePath } = await target();
    expect((await runLcm(["import", "jsonl", write(first()), "--db", databasePath, "--apply"])).code).toBe(EXIT.ok);
    const elsewhere = first();
    elsewhere[0]!.sessionId = "elsewhere"; // another conversation, with the summary ids of the one imported as conversation 2
    const before = contents(databasePath, dir);
    const run = await runLcm(["import", "jsonl", write(elsewhere), "--db", databasePath, "--apply"]);
    expect([run.code, run.stderr]).toEqual([EXIT.usage, expect.stringMatching(/main\/elsewhere .*: its summary sum_[0-9a-f]+ already belongs to conversation 2\./)]);
    expect(contents(databasePath, dir)).toEqual(before);
  });

  it("two live conversations of one session in the file", async () => {
    const one = first();
    const again = first();
    again[0]!.createdAt = (again[0]!.createdAt as number) + 1;
    for (const record of again) if (record.type === "summary") record.summaryId = `sum_${(record.summaryId as string).slice(4).split("").reverse().join("")}`;
    for (const record of again) for (const edge of (record.sourceSummaries as { summaryId: string }[] | undefined) ?? []) edge.summaryId = `sum_${edge.summaryId.slice(4).split("").reverse().join("")}`;
    for (const record of again) if (record.type === "contextItem" && record.summaryId) record.summaryId = `sum_${(record.summaryId as string).slice(4).split("").reverse().join("")}`;
    await expectRefused([...one, ...again], /conversation main\/s1 \(line \d+\) is live, and so is main\/s1 \(line 1\)/);
  });

  it("two parts of a message with one ordinal, and a summary naming a source twice", async () => {
    const parts = first();
    const message = messages(parts)[0]!;
    (message.parts as object[]).push({ ...(message.parts as object[])[0]! });
    await expectRefused(parts, /message 1 has two parts with one ordinal/);
    const edges = first();
    const summary = edges.find((record) => record.type === "summary")!;
    (summary.sourceMessages as object[]).push((summary.sourceMessages as object[])[0]!);
    await expectRefused(edges, /names a source message twice/);
  });

  it("a seq gap", async () => {
    const records = first();
    const last = messages(records).at(-1)!;
    last.seq = (last.seq as number) + 1;
    records[0]!.nextSeq = (last.seq as number) + 1;
    await expectRefused(records, /does not follow .* without gaps/);
  });
});

describe("lcm import jsonl refuses values no reader could use", () => {
  it.each([
    ["a bootstrap cursor that is not JSON", (records: Line[]) => { records[0]!.bootstrapState = "{broken"; }, /bootstrapState "\{broken" is not a bootstrap cursor/],
    ["a bootstrap cursor of the wrong shape", (records: Line[]) => { records[0]!.bootstrapState = '{"source":"file"}'; }, /is not a bootstrap cursor/],
    ["a last compaction that is not JSON", (records: Line[]) => { records[0]!.lastCompaction = "[]"; }, /lastCompaction "\[\]" is not a compaction record/],
    ["message meta that is not JSON", (records: Line[]) => { messages(records)[3]!.meta = "not json"; }, /message 4 has meta "not json", not a JSON object/],
    ["part meta that is not JSON", (records: Line[]) => { ((messages(records)[3]!.parts as { meta: string | null }[])[0]!).meta = "{bad"; }, /message 4 cannot be read back/],
    ["a time a Date cannot hold", (records: Line[]) => { messages(records)[2]!.createdAt = 1.7e18; }, /message 3 has the time 1700000000000000000/],
    ["a conversation time out of range", (records: Line[]) => { records[0]!.updatedAt = -9e15; }, /updatedAt -9000000000000000 is not a time a Date can hold/],
    ["summary file ids that are not an array", (records: Line[]) => { records.find((record) => record.type === "summary")!.fileIds = '{"a":1}'; }, /fileIds .* not a JSON array/],
  ])("%s", async (_name, mutate, reason) => {
    const records = first();
    mutate(records);
    await expectRefused(records, reason);
  });
});

describe("lcm import jsonl checks what it wrote before anyone sees it", () => {
  it("removes a conversation whose summaries disagree with their sources, and says why", async () => {
    const records = first();
    const summary = records.find((record) => record.type === "summary")!;
    summary.seqEnd = (summary.seqEnd as number) + 1;
    await expectRefused(records, /breaks what LCM keeps true \(summary_metadata_mismatch sum_[0-9a-f]{16}/);
  });

  it("removes a conversation whose counters disagree with its rows", async () => {
    const records = first();
    records[0]!.messageCount = (records[0]!.messageCount as number) - 1;
    await expectRefused(records, /counter_mismatch/);
  });
});

describe("hostile characters through export and import", () => {
  it("U+2028, U+2029, NUL, CR and a lone surrogate come back exactly", async () => {
    const dir = tempDir();
    const databasePath = join(dir, "source.db");
    const hostile = hostileTranscript({ longBytes: 1_000 }).messages.map((message) => message.role === "user"
      ? userMessage(String(message.content)) : assistantMessage(String((message.content as { text: string }[])[0]!.text)));
    await buildDatabase({ databasePath, sessions: [{ sessionKey: "agent:main:hostile", sessionId: "h", messages: hostile }] });
    const file = join(dir, "hostile.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", file, "--db", databasePath], ExportOutputSchema);
    expect(readFileSync(file, "utf8")).toContain("before\u2028after"); // JSON.stringify leaves it raw: the reader must not split there
    const restored = join(dir, "restored.db");
    await runJson(["import", "jsonl", file, "--db", restored, "--apply"], ImportJsonlOutputSchema);
    const again = join(dir, "again.jsonl");
    await runJson(["export", "1", "--format", "jsonl", "--out", again, "--db", restored], ExportOutputSchema);
    expect(readFileSync(again)).toEqual(readFileSync(file));
  });
});
