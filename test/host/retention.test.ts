/**
 * Retention in a real gateway (issue 18). The gateway gets a database that has served for a year: 30,000 messages
 * of agent turns in three old conversations, leaf summaries over all but each one's newest turns. With an age cap of
 * 30 days, the first turn's maintenance starts a bounded run in the background (retention/retention-service.ts: at
 * most 5,000 messages and 2 s), while two sessions keep talking. Checked: every turn is answered, turns were in
 * flight while the run ran, the run archived messages (the archive files exist and hold them; their rows became
 * stubs), `openclaw lcm doctor` finds nothing, and the run went on a worker thread (retention/retention-thread.ts):
 * its log line says so and states the longest delay of the gateway's event loop while it ran. That figure is printed
 * for docs/operations.md; only a generous ceiling is asserted (the design bound is 50 ms, and what holds the loop
 * is no longer the run but the gateway's own work, which a loaded machine stretches).
 */
import { existsSync } from "node:fs";
import { loadavg } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readArchive } from "../retention/retention-helpers.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";
import { parseJsonOutput } from "./harness/openclaw-cli.js";
import { readOpenClawLog } from "./harness/openclaw-log.js";
import { type SeededConversation, seedSummarizedHistory } from "./harness/seed-history.js";

const SEED = { conversations: 3, messagesPerConversation: 10_000, startedDaysAgo: 365, leafMessages: 20, rawTailMessages: 40 };
const PLUGIN_CONFIG = { retentionMaxAgeDays: 30 };
/** Each session stops after its first turn that began once the run had ended, or after this many turns. */
const MAX_TURNS_PER_SESSION = 6;
/**
 * The gateway's event loop while the run went: the design bound is 50 ms (docs/operations.md), and the run itself
 * holds none of it; what does is the gateway's own work on a loaded machine, hence only a generous ceiling here.
 */
const LOOP_DELAY_CEILING_MS = 500;
const RETENTION_LINE =
  /retention: .*archived (\d+) covered message\(s\).*; took ([\d.]+) s( on a worker thread)?, longest slice ([\d.]+) ms(?: \(([\d.]+) ms CPU\))?(?:; the gateway's event loop meanwhile: longest delay ([\d.]+) ms, of which the run's own work on it at most ([\d.]+) ms)?/;

interface RetentionLine {
  text: string;
  /** When the gateway logged it: the end of the run. */
  time: number;
  messages: number;
  durationMs: number;
  longestSliceMs: number;
  /** The main thread's CPU time in that slice. */
  longestSliceCpuMs: number | null;
  /** The run went on a worker thread (the slices above are that thread's). */
  onWorker: boolean;
  /** The gateway's event loop: its longest delay while the run went, whatever held it. */
  gatewayLoopMaxDelayMs: number | null;
  /** The longest stretch of the run's own work on the gateway's thread (starting the worker, handling a message). */
  runOnGatewayThreadMs: number | null;
}

interface TurnRecord {
  session: string;
  turn: number;
  startedAt: number;
  endedAt: number;
  error?: string;
}

describe("retention in a running gateway", () => {
  let suite: HostSuite;
  let seeded: SeededConversation[];
  const turns: TurnRecord[] = [];

  /** The background run's log line, once the gateway has written it. */
  const retentionLine = (): RetentionLine | null => {
    for (const line of readOpenClawLog(suite.logFile)) {
      const match = RETENTION_LINE.exec(line.text);
      if (!match || line.time === undefined) continue;
      return {
        text: line.text, time: line.time, messages: Number(match[1]), durationMs: Number(match[2]) * 1_000, onWorker: match[3] !== undefined,
        longestSliceMs: Number(match[4]), longestSliceCpuMs: match[5] === undefined ? null : Number(match[5]),
        gatewayLoopMaxDelayMs: match[6] === undefined ? null : Number(match[6]), runOnGatewayThreadMs: match[7] === undefined ? null : Number(match[7]),
      };
    }
    return null;
  };

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "retention", pluginConfig: PLUGIN_CONFIG });
    const started = Date.now();
    seeded = await seedSummarizedHistory(suite.database, SEED);
    console.log(`[retention] seeded ${seeded.reduce((sum, conversation) => sum + conversation.messages, 0)} messages ` +
      `(${seeded.reduce((sum, conversation) => sum + conversation.covered, 0)} covered) in ${Date.now() - started} ms`);
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  it("archives old covered messages in the background while two sessions keep talking", async () => {
    const talk = async (name: string) => {
      const session = new HostConversation(suite, `agent:main:${name}`);
      for (let turn = 1; turn <= MAX_TURNS_PER_SESSION; turn++) {
        const runHadEnded = retentionLine() !== null;
        const startedAt = Date.now();
        try {
          await session.say(`${name} turn ${turn}: ${fillerText(300, `${name}-${turn}`)}`);
          turns.push({ session: name, turn, startedAt, endedAt: Date.now() });
        } catch (error) {
          turns.push({ session: name, turn, startedAt, endedAt: Date.now(), error: String(error).slice(0, 400) });
        }
        if (runHadEnded) break;
      }
    };
    await Promise.all([talk("alpha"), talk("beta")]);

    const line = retentionLine();
    expect(line, "the gateway logged no retention run").not.toBeNull();
    const runStartedAt = line!.time - line!.durationMs;
    const inFlight = turns.filter((turn) => turn.startedAt <= line!.time && turn.endedAt >= runStartedAt);
    const requestsDuringRun = suite.model.requests().filter((request) => request.receivedAt >= runStartedAt && request.receivedAt <= line!.time);
    console.log(`[retention] gateway figures: ${JSON.stringify({
      onWorker: line!.onWorker, gatewayLoopMaxDelayMs: line!.gatewayLoopMaxDelayMs, runOnGatewayThreadMs: line!.runOnGatewayThreadMs,
      workerLongestSliceMs: line!.longestSliceMs, workerLongestSliceCpuMs: line!.longestSliceCpuMs, runMs: line!.durationMs, archivedMessages: line!.messages,
      turns: turns.length, turnsInFlightDuringRun: inFlight.length, modelRequestsDuringRun: requestsDuringRun.length,
      turnMs: turns.map((turn) => turn.endedAt - turn.startedAt), loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
    })}`);
    console.log(`[retention] log line: ${line!.text}`);

    expect(turns.filter((turn) => turn.error !== undefined)).toEqual([]);
    expect(inFlight.length).toBeGreaterThan(0);
    expect(line!.messages).toBeGreaterThan(0);
    expect(line!.longestSliceMs).toBeGreaterThan(0);
    // The run's slices went on a worker thread (on PostgreSQL with a pool of its own): none of them held the
    // gateway's event loop.
    expect(line!.onWorker).toBe(true);
    expect(line!.gatewayLoopMaxDelayMs).not.toBeNull();
    expect(line!.gatewayLoopMaxDelayMs!).toBeLessThan(LOOP_DELAY_CEILING_MS);
    // What the run itself did on the gateway's thread: start a worker and take a few messages.
    expect(line!.runOnGatewayThreadMs).not.toBeNull();
    expect(line!.runOnGatewayThreadMs!).toBeLessThan(LOOP_DELAY_CEILING_MS);
  });

  it("wrote what it emptied to archives first: the files exist and hold the messages, the rows are stubs", async () => {
    const line = retentionLine()!;
    const stored = await suite.database.retention();
    expect(stored.archives.length).toBeGreaterThan(0);
    expect(stored.archives.every((archive) => archive.kind === "messages" && archive.done && existsSync(archive.path))).toBe(true);
    expect(stored.stubs).toBe(line.messages);
    expect(stored.stubsWithContent).toBe(0);
    expect(stored.archives.reduce((sum, archive) => sum + archive.messageCount, 0)).toBe(stored.stubs);
    // Every emptied message once, with its text: the archives hold what the rows no longer do.
    const archived = stored.archives.flatMap((archive) => readArchive(archive.path).filter((record) => record.type === "message"));
    expect(new Set(archived.map((record) => record.messageId)).size).toBe(stored.stubs);
    expect(archived.length).toBe(stored.stubs);
    // About 480 characters a message here (the line says 2.4 MB of text for 5,000): far more than nothing.
    expect(archived.reduce((bytes, record) => bytes + String(record.content).length, 0)).toBeGreaterThan(stored.stubs * 100);
    // Only the year-old history went; the sessions of this run kept every message.
    const historyKeys = new Set(seeded.map((conversation) => conversation.sessionKey));
    expect(Object.keys(stored.stubsBySessionKey).filter((key) => !historyKeys.has(key))).toEqual([]);
  });

  it("leaves the database whole: `openclaw lcm doctor` finds nothing", async () => {
    const result = await suite.cli.run(["lcm", "doctor", "--json"], { timeoutMs: 180_000 });
    const report = parseJsonOutput<{ findings: unknown[]; complete: boolean; conversationsChecked: number }>(result);
    expect(report.findings).toEqual([]);
    expect(report.complete).toBe(true);
    expect(report.conversationsChecked).toBeGreaterThanOrEqual(SEED.conversations + 2);
    expect(result.code).toBe(0);
  });

  it("leaves nothing in the gateway log that says the engine or the run failed", () => {
    expect(suite.healthProblems()).toEqual([]);
    expect(suite.logLines().filter((line) => /retention: run failed/.test(line.text)).map((line) => line.text)).toEqual([]);
  });
});
