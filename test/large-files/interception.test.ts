import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { WordTokenEstimator } from "../fakes/word-token-estimator.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";
import { fileBlock, generateJsonDocument, generateLog, generateTypeScriptSource } from "./generated-inputs.js";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const REFERENCE = /\[LCM File: (file_[a-f0-9]{16}) \| ([^|\n]+) \| ([^|\n]+) \| ([\d,]+) bytes\]\n\nExploration Summary:\n/g;

interface FileRow { file_id: string; conversation_id: number; file_name: string | null; mime_type: string; byte_size: number; storage_path: string; explorer: string; origin: string; tool_name: string | null; exploration_summary: string }

function setup(options: Parameters<typeof createTestEngine>[0] = {}) {
  const env = createTestEngine(options);
  return {
    ...env,
    // Each row with its recorded path resolved as readers resolve it (relative to the database's folder).
    files: () => env.db.all<FileRow>("SELECT * FROM large_files ORDER BY created_at, file_id")
      .map((row) => ({ ...row, storage_path: resolveRecordedPath(env.db.path, row.storage_path) })),
    contents: () => env.db.all<{ content: string }>("SELECT content FROM messages ORDER BY message_id").map((row) => row.content),
    references: (text: string) => [...text.matchAll(REFERENCE)].map((match) => ({ fileId: match[1]!, name: match[2]!, mime: match[3]!, bytes: match[4]! })),
    assembled: async (tokenBudget = 200_000) => (await env.newEngine().assemble({ ...SESSION, messages: [], tokenBudget })).messages,
  };
}

/** n distinct words: with the word estimator, exactly n tokens. */
const words = (count: number, prefix = "w") => Array.from({ length: count }, (_, index) => `${prefix}${index}`).join(" ");

describe("large-file interception at ingest", () => {
  it("passes file blocks below the threshold through untouched, byte for byte", async () => {
    const env = setup();
    const message = userMessage(`see ${fileBlock("small.csv", "text/csv", "a,b\n1,2")}`);
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] });
    expect((await env.assembled())[0]).toEqual(message);
    expect(env.files()).toEqual([]);
    expect(existsSync(env.config.filesDirectory)).toBe(false);
  });

  it("intercepts a block at the threshold and leaves one a token below it", async () => {
    // Word estimator, threshold 100: a block of 100 words is stored aside, one of 99 words stays.
    const env = setup({ tokens: new WordTokenEstimator(), config: { largeFileTokenThreshold: 100 } });
    const atThreshold = fileBlock("at.txt", "text/plain", words(100, "a"));
    const below = fileBlock("below.txt", "text/plain", words(99, "b"));
    await env.newEngine().ingest({ ...SESSION, message: userMessage(`${below}\n${atThreshold}`) });
    const [content] = env.contents();
    expect(content).toContain(below);
    expect(env.references(content!)).toEqual([{ fileId: env.files()[0]!.file_id, name: "at.txt", mime: "text/plain", bytes: "389" }]);
    expect(content).not.toContain('<file name="at.txt"');
  });

  it("replaces several large blocks of one message in place and keeps the small one and the text around them", async () => {
    const env = setup();
    const json = generateJsonDocument();
    const source = generateTypeScriptSource(10_000);
    const small = fileBlock("tiny.txt", null, "tiny");
    const message = userMessage(`Compare these.\n${fileBlock("users.json", "application/json", json)}\n${small}\n${fileBlock("repo.ts", null, source)}\nThanks!`);
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [message] });
    const [content] = env.contents();
    expect(env.references(content!).map((reference) => reference.name)).toEqual(["users.json", "repo.ts"]);
    expect(content!.startsWith("Compare these.\n[LCM File: file_")).toBe(true);
    expect(content).toContain(`\n${small}\n[LCM File: file_`);
    expect(content!.endsWith("\nThanks!")).toBe(true);
    expect(content!.length).toBeLessThan(5_000);
    expect(env.files().map((file) => [file.file_name, file.explorer, file.origin])).toEqual(
      expect.arrayContaining([["users.json", "json", "file-block"], ["repo.ts", "code:typescript", "file-block"]]),
    );
    for (const file of env.files()) expect(readFileSync(file.storage_path, "utf8")).toBe(file.file_name === "repo.ts" ? source : json);
  });

  it("rewrites file blocks inside text blocks and keeps the other blocks", async () => {
    const env = setup();
    const log = generateLog(20_000);
    const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };
    const message = userMessage("", { content: [{ type: "text", text: "intro" }, { type: "text", text: fileBlock("app.log", null, log) }, image] });
    await env.newEngine().ingest({ ...SESSION, message });
    const [assembled] = await env.assembled();
    const blocks = assembled!.content as { type: string; text?: string }[];
    expect(blocks[0]).toEqual({ type: "text", text: "intro" });
    expect(blocks[1]!.text).toMatch(/^\[LCM File: file_[a-f0-9]{16} \| app\.log \| text\/plain \| [\d,]+ bytes\]/);
    expect(blocks[2]).toEqual(image);
  });

  it("stores an oversized tool result aside, naming the tool, and keeps the call and result paired", async () => {
    const env = setup();
    const log = generateLog(30_000);
    const call = toolCallMessage([{ id: "call1", name: "exec", arguments: { command: "cat app.log" } }]);
    const result = toolResultMessage("call1", "exec", log);
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("show the log"), call, result, assistantMessage("done")] });
    const assembled = await env.assembled();
    expect(assembled.map((message) => message.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    const text = (assembled[2]!.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^\[LCM File: file_[a-f0-9]{16} \| exec-output \| text\/plain \| [\d,]+ bytes\]\n\nExploration Summary:\nOutput of tool "exec"/);
    expect(assembled[2]).toMatchObject({ toolCallId: "call1", toolName: "exec" });
    expect(env.files()[0]).toMatchObject({ origin: "tool-result", tool_name: "exec", explorer: "text:fallback" });
    expect(JSON.stringify(assembled)).not.toContain("request 12345 took");
  });

  it("keeps a large read out of the database whole: the copy of the output in details points at the stored file too", async () => {
    const env = setup();
    const log = generateLog(30_000);
    const call = toolCallMessage([{ id: "call1", name: "read", arguments: { path: "app.log" } }]);
    // OpenClaw's read tool: the text for the model, and the whole file again in details.
    const result = toolResultMessage("call1", "read", log, { details: { kind: "text", content: log } });
    await env.newEngine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [userMessage("read the log"), call, result, assistantMessage("done")] });
    const stored = env.db.get<{ size: number }>("SELECT sum(length(content) + length(meta)) AS size FROM messages")!.size;
    expect(stored).toBeLessThan(log.length / 10);
    const [, , read] = await env.assembled();
    const text = (read!.content as { text: string }[])[0]!.text;
    expect(text).toMatch(/^\[LCM File: file_[a-f0-9]{16} \| read-output/);
    expect(read!.details).toEqual({ kind: "text", content: text });
    expect(readFileSync(env.files()[0]!.storage_path, "utf8")).toBe(log);
  });

  it("stores a large bash execution output aside", async () => {
    const env = setup();
    const message: AgentMessage = { role: "bashExecution", command: "cat big.json", output: generateJsonDocument(), exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() };
    await env.newEngine().ingest({ ...SESSION, message });
    const [content] = env.contents();
    expect(content).toMatch(/\[LCM File: file_[a-f0-9]{16} \| bash-output \| application\/json \| [\d,]+ bytes\]/);
    expect(content).toContain('Output of tool "bash" (command: cat big.json)');
    expect(env.files()[0]).toMatchObject({ explorer: "json", tool_name: "bash" });
  });

  it("stores the same content once per conversation and gives it the same id; another conversation gets its own", async () => {
    const env = setup();
    const json = generateJsonDocument();
    await env.newEngine().ingest({ ...SESSION, message: userMessage(fileBlock("a.json", null, json)) });
    await env.newEngine().ingest({ ...SESSION, message: userMessage(`again ${fileBlock("b.json", null, json)}`) });
    await env.newEngine().ingest({ sessionId: "s2", message: userMessage(fileBlock("a.json", null, json)) });
    const [first, second, other] = env.contents().map((content) => env.references(content)[0]!.fileId);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    expect(env.files()).toHaveLength(2);
    const directory = dirname(env.files()[0]!.storage_path);
    expect(readdirSync(directory)).toHaveLength(1);
  });

  it("keeps every stored file inside <filesDirectory>/<conversation>/, whatever the file name says", async () => {
    const env = setup({ config: { filesDirectory: join(tempDir(), "store", "lcm-files") } });
    const content = generateLog(5_000);
    const names = ["../../../../etc/passwd", "..\\..\\..\\evil.sh", "/etc/cron.d/job", "a/../../b.json", "x\u0000y.txt"];
    for (const [index, name] of names.entries()) {
      await env.newEngine().ingest({ ...SESSION, message: userMessage(fileBlock(name.replace(/"/g, "&quot;"), null, `${index}\n${content}`)) });
    }
    const files = env.files();
    expect(files).toHaveLength(names.length);
    for (const file of files) {
      expect(relative(env.config.filesDirectory, file.storage_path)).toMatch(/^\d+\/file_[a-f0-9]{16}\.[a-z0-9]{1,10}$/);
    }
    expect(readdirSync(dirname(env.config.filesDirectory))).toEqual(["lcm-files"]);
  });

  it("fails soft: when the file cannot be stored, the message is stored unchanged and the failure logged", async () => {
    const blocker = join(tempDir(), "blocker");
    writeFileSync(blocker, "not a directory");
    const env = setup({ config: { filesDirectory: join(blocker, "files") } });
    const message = userMessage(fileBlock("big.log", null, generateLog(20_000)));
    expect(await env.newEngine().ingest({ ...SESSION, message })).toEqual({ ingested: true });
    expect((await env.assembled(10_000_000))[0]).toEqual(message); // a budget that holds it whole
    expect(env.files()).toEqual([]);
    expect(env.logger.lines.filter((line) => line.level === "warn").map((line) => line.message).join("\n")).toMatch(
      /Large-file interception failed for a user message of [\d,]+ tokens; it is stored unchanged \(LcmError: Could not store a large file at /,
    );
  });
});
