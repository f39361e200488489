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

  /** One turn; `requests` are the model requests made while it ran (the turn's and any background work's). */
  async say(message: string, options: { local?: boolean } = {}): Promise<AgentTurn & { requests: RecordedRequest[] }> {
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
    const stored = this.suite.database.messages(this.sessionKey);
    expect(stored.map((message) => message.role)).toEqual(host.map((message) => message.role));
    host.forEach((message, index) => {
      if (message.text !== "") expect(stored[index]!.content).toContain(message.text);
    });
    expect(stored.filter((message) => message.role === "user").map((message) => message.content))
      .toEqual(expectedUserMessages);
    expect(new Set(stored.map((message) => message.identityKey)).size).toBe(stored.length);
  }
}

/**
 * Deterministic filler of about `tokens` tokens (five-letter words and a space: 1.5 tokens each by the usual
 * four-characters rule), to make turns big enough that compaction comes within a few turns.
 */
export function fillerText(tokens: number, seed: string): string {
  const words: string[] = [];
  let state = [...seed].reduce((hash, char) => (hash * 31 + char.charCodeAt(0)) >>> 0, 7);
  for (let index = 0; index < Math.ceil(tokens / 1.5); index++) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    words.push(state.toString(36).padStart(5, "q").slice(-5));
  }
  return words.join(" ");
}
