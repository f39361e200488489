/**
 * Seeded, scripted agent sessions for compaction tests and the demo-like fixtures: user requests, assistant
 * replies, tool calls with their results, and exact identifiers (paths, error codes, hashes) sprinkled in.
 * The same seed always gives the same session.
 */
import type { AgentMessage } from "../../src/host/openclaw-types.js";

/** mulberry32: a tiny deterministic PRNG. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = [
  "deploy", "cache", "schema", "migration", "worker", "queue", "retry", "index", "parser", "config", "token",
  "budget", "review", "branch", "release", "latency", "buffer", "socket", "payload", "session", "ledger",
];
const TOOLS = ["read_file", "run_command", "grep", "write_file"];
const BASE_TIME = Date.UTC(2026, 10, 2, 9, 0, 0);

export interface SessionOptions {
  seed: number;
  turns: number;
  /** Largest number of filler words in one message. */
  maxWords?: number;
  /** Probability that a turn uses tools. */
  toolRate?: number;
}

/** One turn's messages (user first), in the shape OpenClaw commits them. */
export type Turn = AgentMessage[];

export function generateSession(options: SessionOptions): Turn[] {
  const random = seededRandom(options.seed);
  const maxWords = options.maxWords ?? 60;
  const toolRate = options.toolRate ?? 0.5;
  let clock = BASE_TIME;
  const stamp = () => (clock += 1_000 + Math.floor(random() * 30_000));
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  const filler = (count: number) => Array.from({ length: count }, () => pick(WORDS)).join(" ");
  const sized = () => 5 + Math.floor(random() * maxWords);

  const turns: Turn[] = [];
  for (let turn = 1; turn <= options.turns; turn++) {
    const messages: AgentMessage[] = [
      {
        role: "user",
        content: `turn ${turn}: please look at src/module${turn}/handler.ts about ${filler(sized())}`,
        timestamp: stamp(),
        idempotencyKey: `seed${options.seed}:turn${turn}:user`,
      },
    ];
    if (random() < toolRate) {
      const callCount = 1 + Math.floor(random() * 2);
      const calls = Array.from({ length: callCount }, (_, index) => ({
        type: "toolCall",
        id: `call_${turn}_${index}`,
        name: pick(TOOLS),
        arguments: { path: `src/module${turn}/file${index}.ts` },
      }));
      messages.push(assistant([{ type: "text", text: `checking ${filler(3)}` }, ...calls], stamp(), "toolUse"));
      for (const call of calls) {
        messages.push({
          role: "toolResult",
          toolCallId: call.id,
          toolName: call.name,
          content: [{ type: "text", text: `ERR_CODE_${turn}${call.id.length} at /var/log/app/run${turn}.log ${filler(sized())}` }],
          isError: false,
          timestamp: stamp(),
        });
      }
    }
    messages.push(assistant([{ type: "text", text: `turn ${turn} done: ${filler(sized())} hash ${hashFor(turn)}` }], stamp(), "stop"));
    turns.push(messages);
  }
  return turns;
}

function assistant(content: unknown[], timestamp: number, stopReason: string): AgentMessage {
  return {
    role: "assistant",
    content,
    api: "openai-completions",
    provider: "fake",
    model: "fake-model",
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15 },
    stopReason,
    timestamp,
  };
}

/** A stable 12-hex "commit hash" per turn, so identifiers can be searched for later. */
export function hashFor(turn: number): string {
  return ((turn * 2654435761) >>> 0).toString(16).padStart(8, "0") + "beef";
}
