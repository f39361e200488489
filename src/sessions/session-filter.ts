/**
 * Which sessions LCM remembers (specs/016-session-lifecycle.md). OpenClaw runs cron jobs, heartbeats, sub-agents and
 * memory helpers as sessions of their own; storing them fills the database with conversations nobody returns to.
 * `ignoreSessionPatterns` keeps LCM out of a session entirely; `statelessSessionPatterns` stores nothing from it but
 * leaves it the recall tools, to read what the agent's other conversations stored. Both default to OpenClaw's own
 * session-key shapes: `agent:<id>:cron:<job>[:run:<id>]`, `agent:<id>:subagent:<name>`, isolated heartbeats ending in
 * `:heartbeat`, memory flushes under `agent:<id>:internal-session-effects:`, and memory dreaming runs
 * `agent:<id>:dreaming-narrative-<…>`.
 */

/** What LCM does with a session: store and serve it, serve it without storing, or stay out of it. */
export type SessionTreatment = "store" | "stateless" | "ignore";

export interface SessionPatterns {
  ignoreSessionPatterns: readonly string[];
  statelessSessionPatterns: readonly string[];
}

export class SessionFilter {
  private readonly ignore: readonly RegExp[];
  private readonly stateless: readonly RegExp[];

  constructor(patterns: SessionPatterns) {
    this.ignore = patterns.ignoreSessionPatterns.map(globToRegExp);
    this.stateless = patterns.statelessSessionPatterns.map(globToRegExp);
  }

  /** A session without a key (older hosts, some CLI paths) is stored: nothing says it should not be. */
  treatmentOf(sessionKey: unknown): SessionTreatment {
    if (typeof sessionKey !== "string" || sessionKey === "") return "store";
    if (this.ignore.some((pattern) => pattern.test(sessionKey))) return "ignore";
    if (this.stateless.some((pattern) => pattern.test(sessionKey))) return "stateless";
    return "store";
  }
}

/** A whole-key, case-insensitive match: `*` is any run of characters (colons included), `?` one character. */
export function globToRegExp(pattern: string): RegExp {
  const body = [...pattern].map((char) => {
    if (char === "*") return ".*";
    if (char === "?") return ".";
    return /[\\^$.|+()[\]{}]/.test(char) ? `\\${char}` : char;
  }).join("");
  return new RegExp(`^${body}$`, "is");
}
