/**
 * Bad values are normalised at the boundary, once, so no stored row can break a later read; /lcm doctor finds and
 * repairs the rows an older version stored (issue 13). A host timestamp above 2^53 (a nanosecond epoch) used to be
 * stored as it came: node:sqlite cannot read such an integer back, so every assemble of the conversation fell back
 * to the host's messages, lcm_grep's time filter skipped the row without saying so, and the doctor found nothing.
 */
import { describe, expect, it } from "vitest";
import type { AgentMessage, CommandContext } from "../../src/host/openclaw-types.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, sessionOf, type RecallEnv, type Session } from "../helpers/recall.js";
import { insertCondensedSummary, insertLeafSummary } from "../helpers/summaries.js";

interface GrepDetails {
  matches: { type: string; seq?: number; createdAt: string; alsoIn?: string[] }[];
  truncated: boolean;
  status?: string;
}

function doctor(env: RecallEnv, session: Session, args = "doctor"): Promise<string> {
  const context: CommandContext = {
    agentId: session.agentId, sessionKey: session.sessionKey, sessionId: session.sessionId, args, commandBody: `/lcm ${args}`,
  };
  return env.api.command("lcm").handler(context).then((reply) => reply.text);
}

/** Messages whose created_at a Date cannot hold; counted in SQL, since reading them may throw. */
function outOfRange(env: RecallEnv): number {
  return env.db.get<{ n: number }>(
    "SELECT count(*) AS n FROM messages WHERE created_at NOT BETWEEN -8640000000000000 AND 8640000000000000",
  )!.n;
}

const INGEST_TIME = "the ingest time";

/** Host timestamps and the created_at each must be stored with. */
const BOUNDARY: [string, number | string, number | typeof INGEST_TIME][] = [
  ["a nanosecond epoch (1.7e18)", 1.7e18, 1.7e12],
  ["a nanosecond epoch near the int64 limit (9.2e18)", 9.2e18, 9.2e12],
  ["a microsecond epoch (1e16)", 1e16, 1e13],
  ["seconds before the earliest Date (-8.64e15 - 1)", -8.64e15 - 1, INGEST_TIME],
  ["a date string past the latest Date", "+275760-09-13T00:00:00.001Z", INGEST_TIME],
];

describe.each(["commitTurn", "ingest"] as const)("a host timestamp at the boundary, through %s", (hook) => {
  const env = createRecallEnv();

  it.each(BOUNDARY.map((entry, index) => [...entry, index] as const))(
    "%s is stored as a time a Date holds, kept verbatim for the host, and every read works",
    async (_name, timestamp, expected, index) => {
      const session = sessionOf("main", `${hook}-${index}`);
      const message = userMessage(`boundary message needle${index}`, { timestamp } as Partial<AgentMessage>);
      const before = Date.now();
      if (hook === "commitTurn") await env.commit(session, [message]);
      else await env.api.engine().ingest({ sessionId: session.sessionId, sessionKey: session.sessionKey, message });

      expect(outOfRange(env)).toBe(0);
      const createdAt = env.db.get<{ created_at: number }>(
        "SELECT created_at FROM messages WHERE conversation_id = ?", env.conversationId(session),
      )!.created_at;
      if (expected === INGEST_TIME) expect(createdAt).toBeGreaterThanOrEqual(before);
      else expect(createdAt).toBe(expected);

      const assembled = await env.api.engine().assemble({ sessionId: session.sessionId, sessionKey: session.sessionKey, messages: [] });
      expect(assembled.messages).toEqual([message]); // decoded exactly, the host's timestamp included
      const found = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: `needle${index}\\b` }, session));
      expect(found).toMatchObject({ truncated: false, matches: [{ type: "message", createdAt: new Date(createdAt).toISOString() }] });
      expect(await doctor(env, session)).toContain("No problems found");
      expect(env.api.errors()).toEqual([]);
    },
  );
});

describe("rows an older version stored with times a Date cannot hold", () => {
  /**
   * Eight messages, seqs 2–4 under two leaf summaries and a condensed one, then the values the old codec wrote for
   * these host timestamps: seq 2 1.7e18 and seq 3 9.2e18 (nanoseconds) and seq 5 1e16 (microseconds), each stored
   * only in created_at (flag timestampIsCreatedAt); seq 7 -8.64e15 - 1 read as seconds (x 1000), the host's value
   * in meta. The summaries above seqs 2 and 3 carry them in latest_at, as compaction copied them.
   */
  async function olderDatabase() {
    const env = createRecallEnv();
    const messages = Array.from({ length: 8 }, (_, index) =>
      index % 2 === 0 ? userMessage(`question about needle${index + 1}`) : assistantMessage(`answer about needle${index + 1}`));
    await env.commit(MAIN, messages);
    const conversationId = env.conversationId(MAIN);
    const first = insertLeafSummary(env.db, conversationId, 1, 2, "Summary: needle1 and needle2 were discussed.");
    const second = insertLeafSummary(env.db, conversationId, 3, 4, "Summary: needle3 and needle4 were discussed.");
    const condensed = insertCondensedSummary(env.db, conversationId, [first, second], "Summary of the needle questions.");
    const setMessage = (seq: number, sql: string) => env.db.run(`UPDATE messages SET ${sql} WHERE conversation_id = ? AND seq = ?`, conversationId, seq);
    setMessage(2, "created_at = 1700000000000000000");
    setMessage(3, "created_at = 9200000000000000000");
    setMessage(5, "created_at = 10000000000000000");
    setMessage(7, "created_at = -8640000000000001000, flags = flags & ~16, meta = json_set(meta, '$.timestamp', -8640000000000001)");
    env.db.run("UPDATE summaries SET latest_at = 1700000000000000000 WHERE summary_id = ?", first);
    env.db.run("UPDATE summaries SET latest_at = 9200000000000000000 WHERE summary_id IN (?, ?)", second, condensed);
    const times = env.db.all<{ seq: number; created_at: number }>(
      "SELECT seq, created_at FROM messages WHERE conversation_id = ? AND seq IN (1, 4, 6, 8) ORDER BY seq", conversationId,
    );
    const timeOf = (seq: number) => times.find((row) => row.seq === seq)!.created_at;
    return { env, conversationId, first, second, condensed, timeOf, messages };
  }

  it("fail assemble and make lcm_grep miss rows silently until the doctor repairs them", async () => {
    const { env } = await olderDatabase();
    expect(outOfRange(env)).toBe(4);
    // What an older version left behind: assemble falls back to the host's (empty) messages ...
    const broken = await env.api.engine().assemble({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: [] });
    expect(broken.messages).toEqual([]);
    expect(env.api.errors().at(-1)).toMatch(/assemble failed: .*too large to be represented as a JavaScript number/);
    // ... and lcm_grep's time filter skips the four rows, reporting a complete search.
    const partial = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "needle\\d", scope: "messages" }));
    expect(partial.truncated).toBe(false);
    expect(partial.matches.map((match) => match.seq).sort()).toEqual([1, 4, 6, 8]);
  });

  it("are found by /lcm doctor without reading them, and repaired by /lcm doctor repair", async () => {
    const { env, conversationId, first, second, condensed } = await olderDatabase();
    const report = await doctor(env, MAIN);
    expect(report).toMatch(/7 problems:/);
    for (const subject of ["message 2", "message 3", "message 5", "message 7", first, second, condensed]) {
      expect(report).toContain(`- timestamp_out_of_range [conversation ${conversationId}] ${subject}: a stored time is outside`);
    }
    expect(report).toContain(`Safe repairs available (normalize the stored times of conversation ${conversationId}): run /lcm doctor repair.`);
    expect(await doctor(env, MAIN, "doctor repair")).toContain(`Applied 1 safe repair: normalize the stored times of conversation ${conversationId}.`);
    expect(await doctor(env, MAIN)).toContain("No problems found");
  });

  it("repair scales the times down, keeps each host timestamp in meta, and recomputes the summaries' ranges", async () => {
    const { env, conversationId, first, second, condensed, timeOf } = await olderDatabase();
    await doctor(env, MAIN, "doctor repair");
    const rows = env.db.all<{ seq: number; created_at: number; flags: number; meta: string }>(
      "SELECT seq, created_at, flags, meta FROM messages WHERE conversation_id = ? AND seq IN (2, 3, 5, 7) ORDER BY seq", conversationId,
    );
    // ns / 1e6, ns / 1e6, µs / 1e3; seq 7 is still out of range as seconds, so it takes seq 6's time.
    expect(rows.map((row) => row.created_at)).toEqual([1.7e12, 9.2e12, 1e13, timeOf(6)]);
    expect(rows.map((row) => (JSON.parse(row.meta) as { timestamp: unknown }).timestamp)).toEqual([1.7e18, 9.2e18, 1e16, -8.64e15 - 1]);
    expect(rows.every((row) => (row.flags & 16) === 0)).toBe(true);

    const range = (summaryId: string) =>
      env.db.get<{ earliest_at: number; latest_at: number }>("SELECT earliest_at, latest_at FROM summaries WHERE summary_id = ?", summaryId)!;
    expect(range(first)).toEqual({ earliest_at: Math.min(timeOf(1), 1.7e12), latest_at: Math.max(timeOf(1), 1.7e12) });
    expect(range(second)).toEqual({ earliest_at: Math.min(9.2e12, timeOf(4)), latest_at: Math.max(9.2e12, timeOf(4)) });
    expect(range(condensed)).toEqual({
      earliest_at: Math.min(range(first).earliest_at, range(second).earliest_at),
      latest_at: Math.max(range(first).latest_at, range(second).latest_at),
    });
  });

  it("after the repair, assemble and lcm_grep work again and find every row, with the host's timestamps", async () => {
    const { env, messages } = await olderDatabase();
    await doctor(env, MAIN, "doctor repair");
    const assembled = await env.api.engine().assemble({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: [] });
    // The condensed summary, then seqs 5-8 raw, decoded with the timestamps the host sent.
    expect(assembled.messages).toHaveLength(5);
    expect(assembled.messages.slice(1)).toEqual([
      { ...messages[4], timestamp: 1e16 }, messages[5], { ...messages[6], timestamp: -8.64e15 - 1 }, messages[7],
    ]);
    const found = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "needle\\d", scope: "messages" }));
    expect(found.truncated).toBe(false);
    expect(found.matches.map((match) => match.seq).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const both = detailsOf<GrepDetails>(await env.call("lcm_grep", { pattern: "needle\\d" }));
    expect(both.status).toBeUndefined();
    // Both summaries repeat the needles they cover: each is folded under the messages it repeats.
    expect(both.matches.filter((match) => match.type === "summary")).toHaveLength(0);
    expect(new Set(both.matches.flatMap((match) => (match.type === "message" ? match.alsoIn ?? [] : [])))).toHaveLength(2);
    expect(env.api.errors()).toEqual([]);
  });
});
