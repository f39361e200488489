/**
 * One session driven through the CLI, remembering what the user sent, so a test can check the plugin stored
 * the host's transcript exactly once and can pick out the model requests of its own turns.
 */
import { expect } from "vitest";
import type { RecordedRequest } from "../fake-model-server.js";
import type { AgentTurn } from "./openclaw-cli.js";
import type { HostSuite } from "./host-suite.js";

export class HostConversation {
  /** User messages sent through `say`, in order. */
  readonly sent: string[] = [];

  constructor(private readonly suite: HostSuite, readonly sessionKey: string) {}

  /**
   * One turn through the gateway's `agent` method (`viaCli`: through `openclaw agent`, its start included, as timed
   * turns need); `requests` are the model requests made while it ran (the turn's and any background work's).
   */
  async say(message: string, options: { local?: boolean; viaCli?: boolean } = {}): Promise<AgentTurn & { requests: RecordedRequest[] }> {
    const mark = this.suite.model.mark();
    const turn = await this.suite.cli.agentTurn(this.sessionKey, message, options);
    this.sent.push(message);
    return { ...turn, requests: this.suite.model.requests({ since: mark }) };
  }

  /** A chat message through the gateway (slash commands: /compact, /lcm), waited for. */
  async sendChat(message: string): Promise<RecordedRequest[]> {
    const mark = this.suite.model.mark();
    await this.suite.sendChat(this.sessionKey, message);
    this.sent.push(message);
    return this.suite.model.requests({ since: mark });
  }

  /**
   * The plugin stored exactly the host's transcript (`chat.history`, needs the gateway): the same roles and
   * texts in the same order, the user messages being the expected ones (by default those sent here), and no
   * identity twice.
   */
  async expectStoredExactlyOnce(expectedUserMessages: string[] = this.sent): Promise<void> {
    const host = await this.suite.hostHistory(this.sessionKey);
    const stored = await this.suite.database.messages(this.sessionKey);
    expect(stored.map((message) => message.role)).toEqual(host.map((message) => message.role));
    host.forEach((message, index) => {
      if (message.text !== "") expect(stored[index]!.content).toContain(message.text);
    });
    expect(stored.filter((message) => message.role === "user").map((message) => message.content))
      .toEqual(expectedUserMessages);
    expect(new Set(stored.map((message) => message.identityKey)).size).toBe(stored.length);
  }
}

/** Words of a work log, each one token for a real tokenizer (o200k) with its leading space. */
const FILLER_WORDS = (
  "the deploy worker queue retried staging build cache request latency index shard replica vault config migration " +
  "release branch review merge test suite gateway session summary token budget window model prompt archive backup " +
  "restore schema column table query plan cursor batch commit rollback lock timeout retry error warning metric alert " +
  "dashboard incident ticket owner team service cluster node region zone disk memory thread pool socket route handler " +
  "parser lexer module package bundle server client agent tool result file path line offset range digest hash version " +
  "tag label note draft report chart graph edge vertex weight score rank filter sort group join split trim pad wrap " +
  "parse render format encode decode compress expand fetch store load save open close read write scan seek flush sync"
).split(" ");

/**
 * Deterministic filler of about `tokens` tokens by a real tokenizer (within about 5% in o200k, checked by
 * test/host-filler.test.ts), about four characters per token like English prose: words, words with a number
 * (three tokens) and identifiers (five). Turns of a stated size are that size for the fake model, for the plugin's
 * estimate and for OpenClaw's character measure alike. (The suite's earlier filler, random five-letter strings, was
 * 2.4 times larger for a real tokenizer than its name said.)
 */
export function fillerText(tokens: number, seed: string): string {
  let state = [...seed].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7);
  const parts: string[] = [];
  for (let counted = 0; counted < tokens;) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    const word = FILLER_WORDS[state % FILLER_WORDS.length]!;
    const shape = (state >>> 12) % 8;
    if (shape < 5) {
      parts.push(word);
      counted += 1;
    } else if (shape < 7) {
      parts.push(`${word}-${(state >>> 4) % 1_000}`);
      counted += 3;
    } else {
      parts.push(`${word}_${((state >>> 3) & 0xffff).toString(16)}.`);
      counted += 5;
    }
  }
  return parts.join(" ");
}
