/**
 * Deterministic synthetic agent sessions for the benchmark. A history of N messages is spread over several
 * conversations of several agents; each conversation is a stream of turns shaped like OpenClaw's durable turns
 * (user, assistant tool calls, the host's excluded nested-tool entry, tool results, final answer), with prose and
 * code from a Zipf vocabulary and an occasional long tool output. A few needles (a rare word, a rare pattern)
 * are planted at fixed fractions of the history so that searches have known answers.
 */
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { Random } from "./random.js";
import { TextMaker } from "./text.js";
import { Vocabulary } from "./vocabulary.js";

/**
 * Bump when the generated text, or how a dataset is finished, changes: it is part of the cache key of generated
 * databases. 3: the full-text index is merged to the end before the file is cached. 4: the term dictionary is
 * built too (schema version 3), as maintenance would have. 5: the build records the largest write-ahead log it saw.
 * 6: long tool outputs are stored aside (benchConfig) and their content indexed with the messages. 7: each dataset
 * stores its files in a directory of its own (datasetPaths), no longer one `files` directory every size shared.
 */
export const GENERATOR_VERSION = 7;

/** A word that occurs in no generated text except where it is planted. */
export const RARE_TERM = "quokkafjord";
/** A pattern that matches only planted incident ids (INC-<6 digits>-Z). */
export const RARE_PATTERN = "INC-\\d{6}-Z";
/** A pattern that matches a code line of most code-bearing messages. */
export const COMMON_PATTERN = "await \\w+\\.\\w+\\(";
/** The most frequent word of the vocabulary. */
export const COMMON_TERM = "the";

export type ConversationRole = "main" | "backlog" | "compacted" | "other";

export interface ConversationPlan {
  role: ConversationRole;
  agentId: string;
  sessionId: string;
  sessionKey: string;
  messageTarget: number;
}

const AGENTS = ["main", "coder", "research", "ops"];

/**
 * How N messages are laid out: the main conversation (40%, never compacted: assemble over many raw items and
 * per-turn ingest run here), the backlog (13%, about 10M tokens at 1M messages: the full-sweep phase), the
 * compacted one (10%, swept once when the dataset is built), and the rest over 3–20 smaller conversations.
 */
export function planConversations(size: number): ConversationPlan[] {
  const plan = (role: ConversationRole, agentId: string, name: string, messageTarget: number): ConversationPlan => ({
    role,
    agentId,
    sessionId: `bench-${name}`,
    sessionKey: `agent:${agentId}:${name}`,
    messageTarget: Math.max(20, Math.round(messageTarget)),
  });
  const plans = [
    plan("main", "main", "main", size * 0.4),
    plan("backlog", "coder", "backlog", size * 0.13),
    plan("compacted", "research", "compacted", size * 0.1),
  ];
  const others = Math.min(20, Math.max(3, Math.round(size / 20_000)));
  for (let index = 0; index < others; index++) {
    plans.push(plan("other", AGENTS[index % AGENTS.length]!, `other-${index + 1}`, (size * 0.37) / others));
  }
  return plans;
}

/** Fractions of a conversation's history where needles are planted (early, middle, late). */
const NEEDLE_FRACTIONS = [0.02, 0.5, 0.98];

/** One conversation's stream of turns. */
export class SessionGenerator {
  private readonly random: Random;
  private readonly text: TextMaker;
  private time: number;
  private turn = 0;
  private callCounter = 0;
  generated = 0;
  private needlesPlanted = 0;
  readonly needleMessages: { kind: "term" | "pattern"; text: string }[] = [];

  constructor(
    readonly plan: ConversationPlan,
    random: Random,
    vocabulary: Vocabulary,
    startTime: number,
    private readonly plantsNeedles: boolean,
  ) {
    this.random = random;
    this.text = new TextMaker(vocabulary);
    this.time = startTime;
  }

  get isDone(): boolean {
    return this.generated >= this.plan.messageTarget;
  }

  /** The next turn's messages in host order. */
  nextTurn(): AgentMessage[] {
    const random = this.random;
    this.turn++;
    this.time += random.int(30_000, 3_600_000);
    const runId = `${this.plan.sessionId}-run-${this.turn}`;
    const messages: AgentMessage[] = [];
    const needle = this.nextNeedle();

    let userText = this.text.prose(random, 1, 3);
    if (random.chance(0.1)) userText += "\n\n```ts\n" + this.text.code(random, 3, 10) + "\n```";
    if (needle) userText += ` Remember the ${RARE_TERM} rollout note ${this.needlesPlanted}.`;
    messages.push({ role: "user", content: userText, timestamp: this.tick(), idempotencyKey: `${runId}:user` });

    if (random.chance(0.6)) {
      const rounds = random.pick([1, 1, 1, 2, 2, 3, 4]);
      for (let round = 0; round < rounds; round++) {
        const calls = random.chance(0.15) ? 2 : 1;
        const content: unknown[] = [];
        if (random.chance(0.3)) content.push({ type: "text", text: this.text.sentence(random) });
        const results: AgentMessage[] = [];
        for (let index = 0; index < calls; index++) {
          const call = this.toolCall();
          content.push({ type: "toolCall", id: call.id, name: call.name, arguments: call.arguments });
          results.push(call.result);
        }
        messages.push(this.assistant(content, "toolUse"));
        if (round === 0) {
          messages.push({
            role: "custom",
            customType: "openclaw.nested-tool.v1",
            content: `nested tool run ${runId}`,
            display: false,
            excludeFromContext: true,
            timestamp: this.tick(),
          });
        }
        for (const result of results) {
          if (needle && round === 0) {
            const incident = `INC-${String(100_000 + ((this.needlesPlanted * 7919 + this.plan.sessionId.length * 104_729) % 900_000))}-Z`;
            const first = (result.content as { text: string }[])[0]!;
            first.text += `\nincident ${incident} opened`;
            this.needleMessages.push({ kind: "pattern", text: incident });
          }
          result.timestamp = this.tick();
          messages.push(result);
        }
      }
    }

    const blocks: unknown[] = [];
    if (random.chance(0.2)) blocks.push({ type: "thinking", thinking: this.text.prose(random, 1, 3), thinkingSignature: "sig" });
    let answer = this.text.prose(random, 1, 5);
    if (random.chance(0.3)) answer += "\n\n```ts\n" + this.text.code(random, 4, 18) + "\n```\n\n" + this.text.sentence(random);
    blocks.push({ type: "text", text: answer });
    messages.push(this.assistant(blocks, "stop"));
    if (needle) this.needleMessages.push({ kind: "term", text: RARE_TERM });
    this.generated += messages.length;
    return messages;
  }

  private nextNeedle(): boolean {
    if (!this.plantsNeedles || this.needlesPlanted >= NEEDLE_FRACTIONS.length) return false;
    if (this.generated < NEEDLE_FRACTIONS[this.needlesPlanted]! * this.plan.messageTarget) return false;
    this.needlesPlanted++;
    return true;
  }

  private tick(): number {
    this.time += this.random.int(1_000, 20_000);
    return this.time;
  }

  private assistant(content: unknown[], stopReason: string): AgentMessage {
    const input = this.random.int(2_000, 60_000);
    return {
      role: "assistant",
      content,
      api: "anthropic-messages",
      provider: "anthropic",
      model: "claude-sonnet-4-5",
      usage: { input, output: this.random.int(20, 2_000), cacheRead: Math.floor(input * 0.8), cacheWrite: 0, totalTokens: input + 500 },
      stopReason,
      timestamp: this.tick(),
    };
  }

  private toolCall(): { id: string; name: string; arguments: Record<string, unknown>; result: AgentMessage } {
    const random = this.random;
    const text = this.text;
    const id = `toolu_${this.plan.sessionId.length}${(++this.callCounter).toString(36)}x${random.int(0, 1e9).toString(36)}`;
    const size = this.resultSize();
    const vocabulary = text.vocabulary;
    let name: string;
    let args: Record<string, unknown>;
    let output: string;
    switch (random.int(0, 4)) {
      case 0:
        name = "read";
        args = { path: vocabulary.path(random) };
        output = text.output(random, "file", size, this.time);
        break;
      case 1:
        name = "exec";
        args = { command: `npm test -- ${vocabulary.path(random)}` };
        output = text.output(random, random.chance(0.5) ? "test" : "log", size, this.time);
        break;
      case 2:
        name = "grep";
        args = { pattern: vocabulary.identifier(random), path: "src" };
        output = text.output(random, "grep", size, this.time);
        break;
      case 3:
        name = "write";
        args = { path: vocabulary.path(random), content: text.code(random, 2, 12) };
        output = `Successfully wrote ${random.int(100, 9_000)} bytes to ${String(args.path)}`;
        break;
      default:
        name = "web_search";
        args = { query: text.sentence(random, 3, 7) };
        output = text.prose(random, Math.max(1, Math.floor(size / 160)), Math.max(1, Math.floor(size / 90)));
        break;
    }
    const result: AgentMessage = {
      role: "toolResult",
      toolCallId: id,
      toolName: name,
      content: [{ type: "text", text: output }],
      isError: random.chance(0.05),
      timestamp: 0,
    };
    return { id, name, arguments: args, result };
  }

  /** Tool output sizes: mostly short, a fifth medium, one in a hundred long (4–24 KB). */
  private resultSize(): number {
    const roll = this.random.next();
    if (roll < 0.79) return this.random.int(60, 400);
    if (roll < 0.99) return this.random.int(400, 2_000);
    return this.random.int(4_000, 24_000);
  }
}

/** Every conversation's generator, seeded from one seed. */
export function createGenerators(seed: number, size: number, startTime = Date.UTC(2026, 0, 1)): SessionGenerator[] {
  const root = new Random(seed);
  const vocabulary = new Vocabulary(root.fork());
  return planConversations(size).map(
    (plan, index) => new SessionGenerator(plan, root.fork(), vocabulary, startTime + index * 60_000, plan.role !== "compacted"),
  );
}
