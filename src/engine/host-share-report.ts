/**
 * The engine's side of spec 023's "say what the host leaves": what a turn's first model call was given and sent, as
 * recorded for /lcm status and `lcm context` (AssemblyRecord), and the log line, once per conversation and process,
 * when OpenClaw's own prompt and tools leave history too little. The line waits until the host has stated its window
 * (an earlier turn, this turn's tool loop or its commit), so that it can name what takes the window.
 */
import type { Logger } from "../contracts.js";
import type { AssemblyRecord, ConversationRecord } from "../records.js";
import { forgetLogged, logOnce } from "../runtime/log-once.js";
import { hostShareOf, hostShareSentence, tooSmallAdvice } from "../services/host-share.js";

/** A turn's first model call, as recorded. */
export function assemblyRecord(
  host: { givenTokens: number; toolCount: number; promptTokens: number },
  budgetTokens: number,
  assembledTokens: number,
  floor: { kind: "line" | "summary" } | null,
): AssemblyRecord {
  return {
    hostBudgetTokens: host.givenTokens, toolCount: host.toolCount, promptTokens: host.promptTokens, budgetTokens,
    assembledTokens, floor: floor?.kind ?? "none",
  };
}

/** One per engine (one turn): holds the turn's record until the window is known, then logs it when too small. */
export class HostShareReport {
  private pending: { conversation: ConversationRecord; assembly: AssemblyRecord } | null = null;

  constructor(private readonly logger: Logger, private readonly databasePath: string) {}

  /** The turn's record; `reserveTokens` is the reply reserve the host stated in this call, if any. */
  hold(conversation: ConversationRecord, assembly: AssemblyRecord, reserveTokens: number | undefined): void {
    const reserve = reserveTokens ?? this.pending?.conversation.lastReserveTokens ?? conversation.lastReserveTokens;
    this.pending = { conversation: { ...conversation, lastReserveTokens: reserve }, assembly };
  }

  /** Logs the held record (once per conversation and process) when the window is known and history got too little. */
  report(windowTokens: number | null | undefined): void {
    if (!this.pending || typeof windowTokens !== "number") return;
    const { conversation, assembly } = this.pending;
    this.pending = null;
    const share = hostShareOf({ ...conversation, lastAssembly: assembly, lastWindowTokens: windowTokens });
    const cause = `host-share:${this.databasePath}:${conversation.conversationId}`;
    if (!share?.tooSmall) {
      forgetLogged(cause);
      return;
    }
    logOnce(this.logger, "warn", cause,
      `conversation ${conversation.conversationId}: ${hostShareSentence(share)}. ${tooSmallAdvice(share)} (/lcm status shows it)`);
  }
}
