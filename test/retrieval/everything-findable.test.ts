/**
 * Issue 22: whatever is stored is found again with lcm_grep's default parameters. Content stored aside (a paste,
 * a tool output) is searched with the messages and reported on the message holding the reference, with where in the
 * file the match is; a message comes before the summaries that repeat it; a number is found with or without the
 * space before its unit. Everything goes through the registered tool, on real SQLite files.
 */
import { rmSync } from "node:fs";
import { resolveRecordedPath } from "../../src/sqlite/stored-file-path.js";
import { describe, expect, it } from "vitest";
import { bestWithin } from "../../src/retrieval/direct-expansion.js";
import type { GrepMatch, MessageMatch } from "../../src/search/grep.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, type RecallEnv } from "../helpers/recall.js";

interface GrepDetails {
  matches: GrepMatch[];
  scope: string;
  strategy?: string;
  truncated: boolean;
  note?: string;
  unavailableFiles?: { fileId: string; reason: string }[];
}

const grep = async (env: RecallEnv, params: Record<string, unknown>) => detailsOf<GrepDetails>(await env.call("lcm_grep", params));
const maintain = (env: RecallEnv) => env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
/** How many chunks of stored content the index holds. */
const indexedChunks = (env: RecallEnv) => env.db.get<{ n: number }>("SELECT count(*) AS n FROM file_chunks")!.n;

/** A paste of `lines` report lines with `needle` on line `at` (1-based). */
function paste(lines: number, at: number, needle: string): string {
  return Array.from({ length: lines }, (_, index) => (index + 1 === at ? needle : `row ${index + 1}: steady state, nothing to report`)).join("\n");
}

describe("content stored aside is searched by default", () => {
  it("finds a key inside a pasted message, before and after maintenance indexes it, with its line and byte offset", async () => {
    // A small window's share: every user message over 150 tokens is stored aside, as at 8k.
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    const text = paste(300, 212, "the staging deploy key is KEY-7781-ZULU, rotate it monthly");
    await env.commit(MAIN, [userMessage(text), assistantMessage("Noted.")]);
    await env.commit(MAIN, [userMessage(paste(200, 5, "an unrelated paste")), assistantMessage("Ok.")]);
    const stored = env.db.get<{ content: string }>("SELECT content FROM messages WHERE seq = 1")!.content;
    expect(stored).not.toContain("KEY-7781-ZULU");
    expect(stored).toMatch(/lcm_grep searches all of it/);
    expect(indexedChunks(env)).toBe(0);

    const offset = Buffer.from(text).indexOf("KEY-7781-ZULU");
    const expected = { type: "message", seq: 1, role: "user", inFile: { fileName: "pasted-text", line: 212 } };
    // Not indexed yet (a backlog this small is indexed by the search itself), then through the index.
    for (const round of ["first search", "after maintenance"]) {
      const regex = await grep(env, { pattern: "KEY-\\d+-ZULU" });
      expect(regex.scope, round).toBe("both");
      expect(regex.matches, round).toHaveLength(1);
      expect(regex.matches[0], round).toMatchObject({ ...expected, inFile: { ...expected.inFile, byteOffset: offset } });
      expect(regex.matches[0]!.snippet).toContain("«KEY-7781-ZULU»");
      const words = await grep(env, { pattern: "deploy key zulu", mode: "full_text" });
      expect(words.matches[0], round).toMatchObject(expected);
      await maintain(env);
    }
    expect(indexedChunks(env)).toBeGreaterThan(4);
    const hit = (await grep(env, { pattern: "KEY-7781" })).matches[0] as MessageMatch;
    expect(hit.inFile!.read).toBe(`lcm_describe(id: ${hit.inFile!.fileId}, startLine: 202)`);
    const page = detailsOf<{ content: { text: string } }>(await env.call("lcm_describe", { id: hit.inFile!.fileId, startLine: 212, maxLines: 1 }));
    expect(page.content.text).toContain("KEY-7781-ZULU");
  });

  it("finds a detail inside a large tool output, on the tool result that stored it", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    const output = paste(500, 431, "ERROR E_LEDGER_TIMEOUT upstream ledger-7 did not answer");
    await env.commit(MAIN, [
      userMessage("run the job"),
      { role: "assistant", content: [{ type: "toolCall", id: "call_1", name: "exec", arguments: { command: "./job.sh" } }], timestamp: Date.now(), stopReason: "toolUse" } as never,
      { role: "toolResult", toolCallId: "call_1", toolName: "exec", content: [{ type: "text", text: output }], timestamp: Date.now() } as never,
      assistantMessage("The job failed."),
    ]);
    await maintain(env);
    const result = await grep(env, { pattern: "E_LEDGER_TIMEOUT", mode: "full_text" });
    expect(result.matches[0]).toMatchObject({ type: "message", seq: 3, role: "toolResult", inFile: { line: 431 } });
  });

  it("says which stored files it could not search, and still finds the rest", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    // Past the head of the paste the message keeps in its own text.
    await env.commit(MAIN, [userMessage(paste(300, 150, "first paste holds ALPHA-1")), assistantMessage("ok")]);
    await env.commit(MAIN, [userMessage(paste(300, 150, "second paste holds ALPHA-2")), assistantMessage("ok")]);
    const [first] = env.db.all<{ storage_path: string; file_id: string }>("SELECT storage_path, file_id FROM large_files ORDER BY created_at");
    rmSync(resolveRecordedPath(env.databasePath, first!.storage_path)); // deleted behind our back
    const result = await grep(env, { pattern: "ALPHA-\\d" });
    expect(result.matches.map((match) => match.snippet)).toEqual([expect.stringContaining("ALPHA-2")]);
    expect(result.unavailableFiles).toEqual([expect.objectContaining({ fileId: first!.file_id, reason: expect.stringMatching(/missing/) })]);
    expect(result.note).toMatch(/could not be searched/);
  });
});

describe("the index of content stored aside", () => {
  const doctor = async (env: RecallEnv, args: string) => (await env.api.command("lcm").handler({
    agentId: MAIN.agentId, sessionKey: MAIN.sessionKey, sessionId: MAIN.sessionId, args, commandBody: `/lcm ${args}`,
  })).text;

  it("is checked by the doctor, started over by its repair, and found again after", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    await env.commit(MAIN, [userMessage(paste(400, 333, "the vault token is VT-5521-QUILL")), assistantMessage("Noted.")]);
    await maintain(env);
    expect(await doctor(env, "doctor")).toContain("No problems found");
    // A chunk row lost behind the index's back: entries and chunks no longer agree.
    env.db.run("DELETE FROM file_chunks WHERE chunk_id = (SELECT max(chunk_id) FROM file_chunks)");
    const report = await doctor(env, "doctor");
    expect(report).toMatch(/fts_out_of_sync files: files_fts holds 4 rows but file_chunks 3/);
    expect(await doctor(env, "doctor repair")).toMatch(/Applied 1 safe repair/);
    expect(indexedChunks(env)).toBe(0);
    // Until maintenance indexes it again, the search reads the content directly; then through the index.
    expect((await grep(env, { pattern: "VT-5521-QUILL" })).matches[0]).toMatchObject({ seq: 1, inFile: { line: 333 } });
    await maintain(env);
    expect(indexedChunks(env)).toBeGreaterThan(0);
    expect(await doctor(env, "doctor")).toContain("No problems found");
    expect((await grep(env, { pattern: "VT-5521-QUILL" })).matches[0]).toMatchObject({ seq: 1, inFile: { line: 333 } });
  });

  it("drops a stored file's chunks with its row, so nothing points at content that is gone", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    await env.commit(MAIN, [userMessage(paste(300, 200, "gone soon: GS-1")), assistantMessage("ok")]);
    await maintain(env);
    expect(indexedChunks(env)).toBeGreaterThan(0);
    env.db.run("PRAGMA foreign_keys = OFF");
    env.db.run("DELETE FROM large_files");
    env.db.run("PRAGMA foreign_keys = ON");
    expect(indexedChunks(env)).toBe(0);
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM file_index")!.n).toBe(0);
    expect(await doctor(env, "doctor")).toContain("No problems found");
  });
});

describe("sources before copies", () => {
  /** 60 exchanges with one unique identifier in exchange 7, compacted into a DAG several levels deep. */
  async function compactedSession(): Promise<{ env: RecallEnv; needleSeq: number }> {
    const env = createRecallEnv({ config: { freshTailCount: 4, leafChunkTokens: 300, leafMinFanout: 2, condensedMinFanout: 2, leafTargetTokens: 80, condensedTargetTokens: 80 } });
    const messages = [];
    for (let index = 1; index <= 60; index++) {
      messages.push(userMessage(index === 7 ? "The incident id is INC-20260311-Q7X, page the on-call." : `question ${index} about the rollout plan and its checks`));
      messages.push(assistantMessage(`answer ${index}: the rollout plan step ${index} is done`));
    }
    for (let turn = 0; turn < messages.length; turn += 10) await env.commit(MAIN, messages.slice(turn, turn + 10));
    for (let round = 0; round < 4; round++) {
      await env.api.engine().compact({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, force: true, compactionTarget: "threshold", tokenBudget: 600 });
    }
    return { env, needleSeq: 13 };
  }

  it("lists the one message holding an id first, with the summaries repeating it folded under it, in every mode and sort", async () => {
    const { env, needleSeq } = await compactedSession();
    const copies = env.db.all<{ summary_id: string; depth: number }>("SELECT summary_id, depth FROM summaries WHERE instr(content, 'INC-20260311-Q7X') > 0 ORDER BY depth");
    // The deterministic summaries keep the id at more than one depth: the copies are real.
    expect(copies.length).toBeGreaterThanOrEqual(2);
    expect(new Set(copies.map((copy) => copy.depth)).size).toBeGreaterThanOrEqual(2);
    for (const params of [
      { pattern: "INC-20260311-Q7X" },
      { pattern: "INC-\\d{8}-Q7X", mode: "regex" },
      { pattern: "INC-20260311-Q7X", mode: "full_text" },
      { pattern: "INC-20260311-Q7X", mode: "full_text", sort: "recency" },
      { pattern: "incident id", mode: "full_text" },
    ]) {
      const result = await grep(env, params);
      expect(result.matches[0], JSON.stringify(params)).toMatchObject({ type: "message", seq: needleSeq });
      expect((result.matches[0] as MessageMatch).alsoIn, JSON.stringify(params)).toEqual(expect.arrayContaining(copies.map((copy) => copy.summary_id)));
      expect(result.matches.filter((match) => match.type === "summary")).toEqual([]);
    }
    // With room for three matches, the message is still the first.
    const short = await grep(env, { pattern: "INC-20260311-Q7X", limit: 3 });
    expect(short.matches[0]).toMatchObject({ type: "message", seq: needleSeq });
  });

  it("keeps a summary that matches on its own words (its sources do not hold them)", async () => {
    const { env } = await compactedSession();
    const summary = env.db.get<{ summary_id: string; id: number }>("SELECT summary_id, id FROM summaries ORDER BY depth DESC LIMIT 1")!;
    env.db.run("UPDATE summaries SET content = content || ' Decision: freeze Fridays.' WHERE id = ?", summary.id);
    env.db.run("UPDATE search_index_state SET through = 0 WHERE name = 'summaries_fts'");
    env.db.run("INSERT INTO summaries_fts (summaries_fts) VALUES ('delete-all')");
    const result = await grep(env, { pattern: "freeze Fridays", mode: "full_text" });
    expect(result.matches.map((match) => match.id)).toEqual([summary.summary_id]);
  });
});

describe("excerpts that hold the detail", () => {
  it("lcm_expand_query without a model quotes a detail stored aside, around its rarest word, in an 8k window's answer", async () => {
    const env = createRecallEnv({
      config: { largeFileTokenThreshold: 150, freshTailCount: 4, leafChunkTokens: 400, leafMinFanout: 2, condensedMinFanout: 2, leafTargetTokens: 80, condensedTargetTokens: 80 },
    });
    const decoys = (from: number) => Array.from({ length: 12 }, (_, index) => [
      userMessage(`question ${from + index}: when is the staging deploy key review for the web team?`),
      assistantMessage(`answer ${from + index}: the staging deploy key review is on the list, as every week`),
    ]).flat();
    await env.commit(MAIN, decoys(1));
    // The detail sits in a paste, far from its head, among lines holding more of the question's words than it does:
    // an excerpt centred where most words meet would quote those lines; centred on the rarest word, the detail.
    const lines = Array.from({ length: 300 }, (_, index) => `line ${index}: what is the staging deploy key for the web team? ask again`);
    lines[219] = `(${"-".repeat(100)})`;
    lines[220] = "zqvaultera uses KEY-99-QUILL, rotated monthly";
    lines[221] = `(${"-".repeat(100)})`;
    await env.commit(MAIN, [userMessage(lines.join("\n")), assistantMessage("Noted.")]);
    await env.commit(MAIN, decoys(100));
    await maintain(env);
    for (let round = 0; round < 4; round++) {
      await env.api.engine().compact({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, force: true, compactionTarget: "threshold", tokenBudget: 600 });
    }
    const paste = env.db.get<{ message_id: number }>("SELECT message_id FROM messages WHERE seq = 25")!;
    expect(env.db.get<{ n: number }>("SELECT count(*) AS n FROM context_items WHERE message_id = ?", paste.message_id)!.n).toBe(0);
    // What assemble records when OpenClaw states an 8k window: the answer is capped at 12% of it.
    env.db.run("UPDATE conversations SET last_window_tokens = 8192 WHERE session_id = ?", MAIN.sessionId);
    const result = await env.call("lcm_expand_query", { prompt: "What is the staging deploy key for zqvaultera?", query: "zqvaultera staging deploy key" });
    const answer = result.content.map((part) => part.text).join("\n");
    expect(detailsOf<{ mode: string }>(result).mode).toBe("excerpts");
    expect(answer).toContain("KEY-99-QUILL");
    expect(answer).toMatch(/\[message \d+ · user · .* · in file_[0-9a-f]{16}\]/);
  });
});

describe("an answer too small for every excerpt", () => {
  // A word-count estimator makes the arithmetic visible: header 2 words + 2, texts as counted.
  const words = { estimate: (text: string) => text.split(/\s+/).filter(Boolean).length, imageTokens: 0 };
  const excerpt = (id: number, text: string, core?: string) => ({
    summaryId: "sum_0000000000000001", time: id, header: `[message ${id}]`, text, tokenCount: words.estimate(text),
    ...(core ? { core: { text: core, tokenCount: words.estimate(core) } } : {}),
  });

  it("keeps an excerpt that does not fit whole as the window around what matched, in its place", () => {
    const first = excerpt(1, "a ".repeat(60));
    const second = excerpt(2, `${"b ".repeat(80)} KEY-1 ${"b ".repeat(80)}`, "b b KEY-1 b b");
    const third = excerpt(3, "c ".repeat(10));
    // Budget 100: the first costs 64, the second whole 167 (no), its core 9 (yes), the third 14 (yes).
    const kept = bestWithin([first, second, third], 100, words);
    expect(kept.map((item) => item.text)).toEqual([first.text, "b b KEY-1 b b", third.text]);
  });
});

describe("ranked together", () => {
  it("puts the paste holding a question's rare subject above short messages holding its common words", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    const teams = ["zqbalo", "zqkemi", "zqnura", "zqsoti", "zqvuwe", "zqxayo", "zqdarfen", "zqgilhom"];
    for (const team of teams) {
      await env.commit(MAIN, [userMessage(`Note for the roster: the ${team} team keeps its on-call rotation on Tuesdays.`), assistantMessage("Noted.")]);
    }
    const lines = Array.from({ length: 200 }, (_, index) => `${index}: build ${index} passed, nothing to report on this run`);
    lines[120] = "Note for the roster: the on-call rotation for the zqgilhomxa team moves to Hiroshi every Tuesday.";
    await env.commit(MAIN, [userMessage(lines.join("\n")), assistantMessage("Noted.")]);
    for (const team of teams) await env.commit(MAIN, [userMessage(`The ${team} team's on-call rotation moves every Tuesday.`), assistantMessage("ok")]);
    await maintain(env);
    const result = await grep(env, { pattern: "Who takes over the zqgilhomxa on-call rotation on Tuesdays?", mode: "full_text" });
    expect(result.matches[0]).toMatchObject({ type: "message", seq: 17, inFile: { line: 121 } });
  });
});

describe("one collection for how rare a word is", () => {
  it("does not rank a paste first for a word common in the messages because few pastes hold it", async () => {
    const env = createRecallEnv({ config: { largeFileTokenThreshold: 150 } });
    for (let index = 1; index <= 30; index++) await env.commit(MAIN, [userMessage(`release checklist step ${index} is done`)]);
    await env.commit(MAIN, [userMessage("release the release branch today")]);
    const lines = Array.from({ length: 200 }, (_, index) => `${index}: build ${index} passed, nothing to report on this run`);
    lines[100] = "the release went out";
    await env.commit(MAIN, [userMessage(lines.join("\n"))]);
    await maintain(env);
    // Counted apart, "release" is in 31 of 32 messages (worth nothing) but in 1 of 5 chunks of pastes (worth a lot).
    const result = await grep(env, { pattern: "release", mode: "full_text" });
    expect(result.matches[0]).toMatchObject({ type: "message", seq: 31 });
  });
});

describe("forms agents type", () => {
  it("finds a number with or without the space before its unit, first among messages full of other numbers and units", async () => {
    const env = createRecallEnv();
    const messages = [];
    for (let index = 1; index <= 150; index++) messages.push(assistantMessage(`run ${index}: p99 ${1000 + index}.5 ms, build ${200 + index}ms, 12 ms gc`));
    messages.splice(40, 0, assistantMessage("The slow step took 33156.65ms on the runner."));
    messages.splice(90, 0, assistantMessage("Median startup was 812 ms after the fix."));
    await env.commit(MAIN, messages);
    await maintain(env);
    await env.api.engine().maintain({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey });
    for (const [pattern, expected] of [["33156.65 ms", "33156.65ms"], ["33156.65ms", "33156.65ms"], ["812ms", "812 ms"], ["812 ms", "812 ms"], ["took 33156.65 ms", "33156.65ms"]]) {
      const result = await grep(env, { pattern, mode: "full_text" });
      expect(result.matches.slice(0, 5).map((match) => match.snippet), pattern).toEqual(
        expect.arrayContaining([expect.stringContaining(`«${expected}»`)]),
      );
      expect(result.matches[0]!.snippet, pattern).toContain(expected);
    }
  });
});
