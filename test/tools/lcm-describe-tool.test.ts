import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { FileDescription, FilePage, SummaryDescription } from "../../src/retrieval/describe.js";
import { toolResultCharsFor } from "../../src/retrieval/window-share.js";
import { userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, exchanges, MAIN, OTHER_AGENT, sessionOf, textOf, type RecallEnv } from "../helpers/recall.js";
import { insertCondensedSummary, insertLeafSummary } from "../helpers/summaries.js";
import { tempDir } from "../helpers/temp-dir.js";

const FILE_ID = "file_00000000000000aa";
// 3-byte and 4-byte UTF-8 characters, so byte pages must avoid cutting a character.
const FILE_CONTENT = Array.from({ length: 3_000 }, (_, index) => `line ${index} — naïve 🦓 data`).join("\n");

function insertFile(env: RecallEnv, conversationId: number, fileId: string, path: string): void {
  env.db.writeNow(() =>
    env.db.run(
      `INSERT INTO large_files (file_id, conversation_id, content_hash, file_name, mime_type, byte_size, token_count,
         storage_path, exploration_summary, explorer, origin, tool_name, created_at)
       VALUES (?, ?, ?, 'data.txt', 'text/plain', ?, 30000, ?, 'A 3,000-line text file of numbered lines.', 'text:fallback', 'file-block', NULL, 1)`,
      fileId, conversationId, `hash-${fileId}`, Buffer.byteLength(FILE_CONTENT), path,
    ),
  );
}

function bytePage(description: FileDescription): Extract<FilePage, { unit: "bytes" }> {
  if (description.content?.unit !== "bytes") throw new Error(`expected a byte page, got ${JSON.stringify(description.content)}`);
  return description.content;
}

function linePage(description: FileDescription): Extract<FilePage, { unit: "lines" }> {
  if (description.content?.unit !== "lines") throw new Error(`expected a line page, got ${JSON.stringify(description.content)}`);
  return description.content;
}

describe("lcm_describe", () => {
  let env: RecallEnv;
  let leafA: string;
  let leafB: string;
  let condensed: string;
  let otherConversationSummary: string;
  let otherAgentSummary: string;

  beforeAll(async () => {
    env = createRecallEnv();
    await env.commit(MAIN, exchanges(20));
    const conversation = env.conversationId(MAIN);
    leafA = insertLeafSummary(env.db, conversation, 1, 10, "First five exchanges.", { fileIds: [FILE_ID] });
    leafB = insertLeafSummary(env.db, conversation, 11, 20, "Next five exchanges.", { level: "fallback" });
    condensed = insertCondensedSummary(env.db, conversation, [leafA, leafB], "Ten exchanges about topics.");
    const path = join(tempDir(), "data.txt");
    writeFileSync(path, FILE_CONTENT);
    insertFile(env, conversation, FILE_ID, path);
    insertFile(env, conversation, "file_00000000000000bb", join(tempDir(), "missing.txt"));

    const second = sessionOf("main", "second");
    await env.commit(second, exchanges(5, "other"));
    otherConversationSummary = insertLeafSummary(env.db, env.conversationId(second), 1, 4, "Second conversation summary.");
    await env.commit(OTHER_AGENT, exchanges(5, "ops"));
    otherAgentSummary = insertLeafSummary(env.db, env.conversationId(OTHER_AGENT), 1, 4, "Ops secret summary.");
  });

  type ErrorFields = { status?: string; parameter?: string };
  const describeId = async (params: Record<string, unknown>) => detailsOf<SummaryDescription & ErrorFields>(await env.call("lcm_describe", params));
  const describeFile = async (params: Record<string, unknown>) => detailsOf<FileDescription & ErrorFields>(await env.call("lcm_describe", params));

  it("describes a leaf summary: lineage, sources, time range, level and whether it is in context", async () => {
    const result = await describeId({ id: leafA });
    expect(result).toMatchObject({
      type: "summary", summaryId: leafA, kind: "leaf", depth: 0, level: "normal", seqStart: 1, seqEnd: 10,
      sourceMessageCount: 10, parentSummaryIds: [], childSummaryIds: [condensed], fileIds: [FILE_ID], inContext: false,
      content: "First five exchanges.",
    });
    expect(result.sourceMessageIds).toHaveLength(10);
    expect(Date.parse(result.earliestAt)).toBeLessThan(Date.parse(result.latestAt));
    expect((await describeId({ id: leafB })).level).toBe("fallback");
  });

  it("describes a condensed summary with its parents, in the text the model reads", async () => {
    const result = await env.call("lcm_describe", { id: condensed });
    expect(detailsOf(result)).toMatchObject({ kind: "condensed", depth: 1, parentSummaryIds: [leafA, leafB], childSummaryIds: [], inContext: true, descendantCount: 2, sourceMessageCount: 20 });
    expect(textOf(result)).toMatch(/"parentSummaryIds": \["sum_/);
    expect(textOf(result)).toMatch(/content:\nTen exchanges about topics\.$/);
  });

  it("pages a stored file's content by bytes without cutting a character", async () => {
    const first = await describeFile({ id: FILE_ID });
    expect(first).toMatchObject({ type: "file", fileName: "data.txt", mimeType: "text/plain", explorationSummary: expect.stringMatching(/3,000-line/) });
    let text = bytePage(first).text;
    let next = bytePage(first).nextOffset;
    expect(first.contentNote).toMatch(/call again with offset/);
    while (next !== null) {
      const page = bytePage(await describeFile({ id: FILE_ID, offset: next, maxBytes: 64_000 }));
      expect(page.offset).toBe(next);
      text += page.text;
      next = page.nextOffset;
    }
    expect(text).toBe(FILE_CONTENT);
  });

  it("pages a stored file by lines and says the range, the total and where the next page starts", async () => {
    const result = await env.call("lcm_describe", { id: FILE_ID, startLine: 11 });
    // FILE_CONTENT line n (1-based) is "line n-1 — naïve 🦓 data"; 200 lines by default.
    expect(detailsOf<FileDescription>(result).content).toMatchObject({ unit: "lines", startLine: 11, endLine: 210, totalLines: 3_000, nextStartLine: 211, clippedLines: 0 });
    expect(textOf(result)).toMatch(/"contentPage": \{"unit":"lines","startLine":11,"endLine":210,"totalLines":3000,"nextStartLine":211,"clippedLines":0\}/);
    expect(textOf(result)).toContain("content (lines 11-210 of 3000):\nline 10 — naïve 🦓 data\n");
    expect(detailsOf<FileDescription>(result).contentNote).toBe("Showing lines 11-210 of 3000; call again with startLine 211 for more.");
    const onlyMaxLines = linePage(await describeFile({ id: FILE_ID, maxLines: 3 }));
    expect(onlyMaxLines).toMatchObject({ startLine: 1, endLine: 3, text: "line 0 — naïve 🦓 data\nline 1 — naïve 🦓 data\nline 2 — naïve 🦓 data" });
  });

  it("sizes a file page to the conversation's model window, by bytes and by lines, and still walks the whole file", async () => {
    const small = createRecallEnv();
    await small.commit(MAIN, exchanges(2));
    const conversation = small.conversationId(MAIN);
    const path = join(tempDir(), "data.txt");
    writeFileSync(path, FILE_CONTENT);
    insertFile(small, conversation, FILE_ID, path);
    // What assemble records when OpenClaw states an 8k window for the session.
    small.db.run("UPDATE conversations SET last_window_tokens = 8192 WHERE conversation_id = ?", conversation);
    const limit = toolResultCharsFor(8192);
    const call = (params: Record<string, unknown>) => small.call("lcm_describe", params);

    const byBytes = await call({ id: FILE_ID });
    expect(textOf(byBytes).length).toBeLessThanOrEqual(limit);
    expect(detailsOf<FileDescription>(byBytes).contentNote).toMatch(/call again with offset \d+ for more\. \(pages are sized to this conversation's model window of 8192 tokens\)/);
    const byLines = await call({ id: FILE_ID, startLine: 11, maxLines: 2_000 });
    expect(textOf(byLines).length).toBeLessThanOrEqual(limit);
    const page = linePage(detailsOf<FileDescription>(byLines));
    expect(page.startLine).toBe(11);
    expect(page.endLine).toBeLessThan(210);
    expect(page.nextStartLine).toBe(page.endLine + 1);

    // Page by page, by lines, the whole file comes back.
    const lines: string[] = [];
    let next: number | null = 1;
    while (next !== null) {
      const result = await call({ id: FILE_ID, startLine: next });
      expect(textOf(result).length).toBeLessThanOrEqual(limit);
      const current = linePage(detailsOf<FileDescription>(result));
      lines.push(current.text);
      next = current.nextStartLine;
    }
    expect(lines.join("\n")).toBe(FILE_CONTENT);
  });

  it("walks a whole file by line pages", async () => {
    const lines: string[] = [];
    let next: number | null = 1;
    while (next !== null) {
      const page = linePage(await describeFile({ id: FILE_ID, startLine: next, maxLines: 2_000 }));
      expect(page.startLine).toBe(next);
      lines.push(page.text);
      next = page.nextStartLine;
    }
    expect(lines.join("\n")).toBe(FILE_CONTENT);
    const last = await describeFile({ id: FILE_ID, startLine: 2_999 });
    expect(last.contentNote).toBe("Showing lines 2999-3000 of 3000 (the end of the file).");
  });

  it("refuses line and byte paging together, a line past the end, and maxLines out of range, naming the parameter", async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ startLine: 5, offset: 100 }, "startLine", /cannot be combined with "offset": page a file either by lines \(startLine, maxLines\) or by bytes \(offset, maxBytes\)/],
      [{ maxLines: 5, maxBytes: 2_000 }, "maxLines", /cannot be combined with "maxBytes"/],
      [{ startLine: 3_001 }, "startLine", /has 3,000 lines; startLine 3001 is past the end/],
      [{ startLine: 0 }, "startLine", /integer from 1/],
      [{ maxLines: 2_001 }, "maxLines", /integer from 1 to 2000/],
    ];
    for (const [params, parameter, message] of cases) {
      const result = await env.call("lcm_describe", { id: FILE_ID, ...params });
      expect(detailsOf(result), JSON.stringify(params)).toMatchObject({ status: "error", parameter });
      expect(textOf(result)).toMatch(message);
    }
  });

  it("still describes a file whose content is missing on disk", async () => {
    const result = await describeFile({ id: "file_00000000000000bb" });
    expect(result).toMatchObject({ content: null, contentNote: expect.stringMatching(/missing/), explorationSummary: expect.any(String) });
    expect(await describeFile({ id: "file_00000000000000bb", startLine: 1 })).toMatchObject({ content: null, contentNote: expect.stringMatching(/missing/) });
  });

  it("says clearly when an id is unknown or malformed", async () => {
    expect(await describeId({ id: "sum_ffffffffffffffff" })).toMatchObject({ status: "error", parameter: "id" });
    expect(textOf(await env.call("lcm_describe", { id: "sum_ffffffffffffffff" }))).toMatch(/no summary sum_ffffffffffffffff is stored/);
    expect(textOf(await env.call("lcm_describe", { id: "msg_12" }))).toMatch(/must be a summary id .* or a file id/);
    expect(await describeId({})).toMatchObject({ status: "error", parameter: "id" });
  });

  it("reads the agent's other conversations only when asked to, and says how", async () => {
    const refused = await env.call("lcm_describe", { id: otherConversationSummary });
    expect(textOf(refused)).toMatch(/belongs to conversation \d+, not the current conversation. Pass conversationId: \d+ or allConversations: true/);
    expect(await describeId({ id: otherConversationSummary, allConversations: true })).toMatchObject({ summaryId: otherConversationSummary });
  });

  it("never reveals another agent's summary, not even that it exists", async () => {
    for (const params of [{ id: otherAgentSummary }, { id: otherAgentSummary, allConversations: true }]) {
      const result = await env.call("lcm_describe", params);
      expect(textOf(result)).toMatch(/no summary .* is stored in the history you may read/);
      expect(textOf(result)).not.toContain("Ops secret");
    }
    const ops = detailsOf(await env.call("lcm_describe", { id: otherAgentSummary }, OTHER_AGENT));
    expect(ops).toMatchObject({ content: "Ops secret summary." });
  });

  it("rejects an unknown parameter by name", async () => {
    expect(await describeId({ id: leafA, depth: 2 })).toMatchObject({ status: "error", parameter: "depth" });
  });

  it("works for a session whose conversation has no summaries yet", async () => {
    const fresh = sessionOf("main", "fresh");
    await env.commit(fresh, [userMessage("hello")]);
    const result = await env.call("lcm_describe", { id: leafA }, fresh);
    expect(textOf(result)).toMatch(/belongs to conversation/);
  });
});
