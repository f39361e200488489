import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { extractFileIds } from "../../src/large-files/file-reference.js";
import { LargeFileReader } from "../../src/large-files/large-file-reader.js";
import { FakePluginApi, RecordingLlm } from "../fakes/fake-plugin-api.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, conversation, userMessage, withIdempotencyKey } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { fileBlock, generateCsv, generateJsonDocument, generateLog, generateMarkdown, generateTypeScriptSource } from "./generated-inputs.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };

function setup() {
  const env = createTestEngine();
  const reader = new LargeFileReader({ store: env.store });
  const assembledText = async () => {
    const result = await env.newEngine().assemble({ ...SESSION, messages: [], tokenBudget: 200_000 });
    return { text: JSON.stringify(result.messages), estimatedTokens: result.estimatedTokens };
  };
  const storedText = () => env.db.all<{ content: string }>("SELECT content FROM messages ORDER BY seq").map((row) => row.content).join("\n");
  return { ...env, reader, assembledText, storedText };
}

describe("round trip: ingest → assemble → read back", () => {
  it("a 2 MB JSON document: the context holds the reference, never the content; the reader returns it", async () => {
    const env = setup();
    const json = generateJsonDocument();
    await env.newEngine().commitTurn({
      ...SESSION, advancementKey: "t1",
      messages: [userMessage(`What is in here?\n${fileBlock("users.json", "application/json", json)}`), assistantMessage("A user export.")],
    });
    const { text, estimatedTokens } = await env.assembledText();
    const bytes = Buffer.byteLength(json).toLocaleString("en-US");
    expect(text).toMatch(new RegExp(`\\[LCM File: file_[a-f0-9]{16} \\| users\\.json \\| application/json \\| ${bytes} bytes\\]`));
    expect(text).toContain("Exploration Summary:");
    expect(text).not.toContain('"street": "1 Main Street"');
    expect(estimatedTokens).toBeLessThan(1_000);

    const [fileId] = extractFileIds(text);
    const described = await env.reader.describe(fileId!);
    expect(described).toMatchObject({ content: { status: "available" }, file: { fileName: "users.json", origin: "file-block", explorer: "json" } });
    expect(readFileSync(described.file.storagePath, "utf8")).toBe(json);
    const lines = json.split("\n");
    const page = await env.reader.readLines(fileId!, { startLine: 1, maxLines: 50 });
    expect(page).toMatchObject({ startLine: 1, endLine: 50, totalLines: lines.length, hasMore: true, nextStartLine: 51 });
    expect(page.text).toBe(lines.slice(0, 50).join("\n"));
    const last = await env.reader.readLines(fileId!, { startLine: lines.length - 1 });
    expect(last).toMatchObject({ text: lines.slice(-2).join("\n"), hasMore: false, nextStartLine: null });
    const found = await env.reader.grep(fileId!, { pattern: "MARKER_JSON_7f3a", mode: "literal" });
    expect(found.matches).toEqual([{ lineNumber: 5, column: 16, text: '    "marker": "MARKER_JSON_7f3a",', textRange: [15, 31] }]);
  });

  it("a 50,000-row CSV through ingestBatch", async () => {
    const env = setup();
    const csv = generateCsv(50_000);
    await env.newEngine().ingestBatch({ ...SESSION, messages: [userMessage(fileBlock("people.csv", "text/csv", csv)), assistantMessage("Got it.")] });
    const { text } = await env.assembledText();
    expect(text).toContain("CSV table: 50,000 rows × 8 columns");
    expect(text).not.toContain("p49999@example.test");
    const page = await env.reader.readLines(extractFileIds(text)[0]!, { startLine: 50_001, maxLines: 5 });
    expect(page).toMatchObject({ startLine: 50_001, endLine: 50_001, totalLines: 50_001, hasMore: false });
    expect(page.text).toMatch(/^50000,"Doe, Jane 50000",p50000@example\.test,/);
  });

  it("a 10,000-line source file through ingest", async () => {
    const env = setup();
    const source = generateTypeScriptSource(10_000);
    await env.newEngine().ingest({ ...SESSION, message: userMessage(fileBlock("repository.ts", null, source)) });
    const { text } = await env.assembledText();
    expect(text).toContain("TypeScript source: 10,000 lines");
    const fileId = extractFileIds(text)[0]!;
    expect((await env.reader.describe(fileId)).file).toMatchObject({ mimeType: "application/typescript", explorer: "code:typescript" });
    const hits = await env.reader.grep(fileId, { pattern: "^export class Repository49\\d\\b" });
    expect(hits.matches.map((match) => match.text)).toEqual(
      Array.from({ length: 10 }, (_, index) => `export class Repository49${index} extends BaseRepository {`),
    );
  });

  it("a long log through bootstrap from the host's JSONL transcript", async () => {
    const env = setup();
    const log = generateLog(60_000);
    const transcript = join(tempDir(), "session.jsonl");
    const lines = [userMessage(fileBlock("app.log", null, log)), assistantMessage("Lots of errors.")]
      .map((message, index) => JSON.stringify({ type: "message", id: `e${index}`, message }));
    writeFileSync(transcript, `${lines.join("\n")}\n`);
    expect(await env.newEngine().bootstrap({ ...SESSION, sessionFile: transcript })).toMatchObject({ bootstrapped: true, importedMessages: 2 });
    const { text } = await env.assembledText();
    expect(text).toContain("Log levels: INFO 37,500");
    expect(text).not.toContain("request 30000 took");
    const fileId = extractFileIds(text)[0]!;
    const bytes = await env.reader.readBytes(fileId, { offset: 0, length: 58 });
    expect(bytes.text).toBe("2026-11-01T00:00:00.000Z INFO [worker-0] MARKER_LOG_c4e2\n2");
  });

  it("a Markdown report through afterTurn and assemble's history (hosts without durable turns)", async () => {
    const env = setup();
    const report = generateMarkdown(400);
    const history = [userMessage(fileBlock("report.md", "text/markdown", report)), assistantMessage("Summarized.")];
    await env.newEngine().afterTurn({ ...SESSION, messages: history, prePromptMessageCount: 0 });
    const { text } = await env.assembledText();
    expect(text).toMatch(/\[LCM File: file_[a-f0-9]{16} \| report\.md \| text\/markdown \| [\d,]+ bytes\]/);
    expect(text).toContain("Headings: Quarterly Infrastructure Report, Section 1: Findings");
    // The same history seen again by assemble dedupes by the identity of the host's original messages.
    await env.newEngine().assemble({ ...SESSION, messages: history, tokenBudget: 200_000 });
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM messages")!.n).toBe(2);
  });

  it("file ids stay in the stored text compaction reads, and compaction records them on the summary", async () => {
    const env = setup();
    const json = generateJsonDocument();
    const turns = [userMessage(fileBlock("users.json", null, json)), assistantMessage("ok"), ...conversation(40)];
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: turns });
    const [fileId] = extractFileIds(env.storedText());
    expect(fileId).toMatch(/^file_[a-f0-9]{16}$/);
    // /compact: everything but the newest 4 messages is summarized, the file block among it.
    const result = await env.newEngine().compact({ ...SESSION, force: true, tokenBudget: 1_000, compactionTarget: "threshold" });
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, compacted: true });
    const summaries = env.db.all<{ file_ids: string }>("SELECT file_ids FROM summaries");
    expect(summaries.some((row) => (JSON.parse(row.file_ids) as string[]).includes(fileId!))).toBe(true);
  });
});

describe("plugin wiring", () => {
  it("text files are explored by the host model; a replayed message never calls it again", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    let answers = 0;
    const llm = new RecordingLlm(() => `Answer ${++answers}: a quarterly infrastructure report with ten sections of findings and cost data.`);
    const api = new FakePluginApi({ databasePath }, { llm });
    plugin.register(api);
    const message = withIdempotencyKey(userMessage(fileBlock("report.md", "text/markdown", generateMarkdown(400))), "run-1");
    expect(await api.engine().ingest({ ...SESSION, message })).toEqual({ ingested: true });
    expect(await api.engine().ingest({ ...SESSION, message })).toEqual({ ingested: false });
    await api.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] });
    expect(llm.calls).toHaveLength(1);
    expect(llm.calls[0]).toMatchObject({ purpose: "lcm-large-file-exploration", maxTokens: 700 });
    expect(llm.calls[0]!.messages[0]!.content).toMatch(/^Summarize this document in 200-300 words\./);
    const assembled = await api.engine().assemble({ ...SESSION, messages: [], tokenBudget: 100_000 });
    expect(JSON.stringify(assembled.messages)).toContain("Exploration Summary:\\nAnswer 1: a quarterly infrastructure report");
    expect(api.errors()).toEqual([]);
  });
});
