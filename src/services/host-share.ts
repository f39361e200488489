/**
 * What OpenClaw's own request leaves LCM for history (spec 023), in figures and words: its window, the reply reserve
 * it keeps, its system prompt, the message and the tool schemas it sends, by its own measure, and LCM's budget. When
 * that budget is too small for history (the coding tool profile at 16k, long messages at 8k), /lcm status, `lcm
 * context` and the log say so, name what takes the window and what to change. Pure: built from the conversation's
 * recorded first assemble (AssemblyRecord) and window.
 */
import { HOST_WRAPPING_TOKENS, TOOL_SCHEMA_TOKENS } from "../assembly/turn-budget.js";
import type { AssemblyRecord, ConversationRecord } from "../records.js";

/** Below this budget the model sees the memory floor and at most a message or two: too little for history. */
export const USEFUL_HISTORY_TOKENS = 1_024;
/** Tool schemas above this share of the window, or a message above the other, are named in the fix. */
const LARGE_TOOLS_SHARE = 0.25;
const LARGE_MESSAGE_SHARE = 0.1;

export interface HostShare {
  /** The model window, when the host stated it (commitTurn, a tool-loop assemble, compact). */
  windowTokens: number | null;
  /** The reply reserve the host keeps out of the window, when it said. */
  reserveTokens: number | null;
  /** The budget the host gave the first assemble of the last turn. */
  hostBudgetTokens: number;
  /** What the host's system prompt takes, by its measure (null without the window). */
  systemPromptTokens: number | null;
  toolCount: number;
  /** The tool schemas, by the host's measure (LCM's estimate of it). */
  toolTokens: number;
  promptTokens: number;
  /** LCM's budget for history, and what it sent. */
  budgetTokens: number;
  assembledTokens: number;
  floor: AssemblyRecord["floor"];
  /** The budget is below USEFUL_HISTORY_TOKENS: the model sees little more than the memory floor. */
  tooSmall: boolean;
}

export function hostShareOf(conversation: Pick<ConversationRecord, "lastAssembly" | "lastWindowTokens" | "lastReserveTokens">): HostShare | null {
  const assembly = conversation.lastAssembly;
  if (!assembly) return null;
  const window = conversation.lastWindowTokens;
  const reserve = conversation.lastReserveTokens;
  const systemPromptTokens = window === null || reserve === null
    ? null
    : Math.max(0, window - reserve - assembly.hostBudgetTokens - assembly.promptTokens);
  return {
    windowTokens: window,
    reserveTokens: reserve,
    hostBudgetTokens: assembly.hostBudgetTokens,
    systemPromptTokens,
    toolCount: assembly.toolCount,
    toolTokens: assembly.toolCount * TOOL_SCHEMA_TOKENS + HOST_WRAPPING_TOKENS,
    promptTokens: assembly.promptTokens,
    budgetTokens: assembly.budgetTokens,
    assembledTokens: assembly.assembledTokens,
    floor: assembly.floor,
    tooSmall: assembly.budgetTokens < USEFUL_HISTORY_TOKENS,
  };
}

/**
 * One sentence: the window, what the host keeps and sends, what is left for history. The host gives a budget of 1 when
 * its own part already fills the window, so its figures are then "at least".
 */
export function hostShareSentence(share: HostShare): string {
  const atLeast = share.hostBudgetTokens <= 1 ? "at least " : "about ";
  const tools = `${count(share.toolCount)} tool schema${share.toolCount === 1 ? "" : "s"} about ${count(share.toolTokens)}`;
  const left = `LCM has ${count(share.budgetTokens)} tokens for history`;
  if (share.windowTokens === null || share.systemPromptTokens === null) {
    return `OpenClaw gave a budget of ${count(share.hostBudgetTokens)} tokens after its system prompt and the message ` +
      `(${count(share.promptTokens)}); ${tools} take part of it (its measure); ${left}`;
  }
  const reserve = share.reserveTokens === null ? "" : ` keeps ${count(share.reserveTokens)} for the reply;`;
  return `OpenClaw's ${count(share.windowTokens)}-token window${reserve} its system prompt ${atLeast}${count(share.systemPromptTokens)}, ` +
    `the message ${count(share.promptTokens)}, ${tools} (its measure); ${left}`;
}

/** Why history hardly fits and what to change, naming what takes the window. Empty when the budget is large enough. */
export function tooSmallAdvice(share: HostShare): string {
  if (!share.tooSmall) return "";
  const window = share.windowTokens;
  const fixes = ["a model with a larger window"];
  if (window === null || share.toolTokens >= window * LARGE_TOOLS_SHARE) {
    fixes.push('fewer tools (tools.profile "minimal" with LCM\'s tools in tools.alsoAllow)');
  }
  if (window !== null && share.promptTokens >= window * LARGE_MESSAGE_SHARE) fixes.push("shorter messages (paste large text as a file)");
  return "Too little for history: the model sees only LCM's memory floor (the newest summary, shortened, and how to " +
    "search the rest) and at most the last message or two; summaries stay at a useful size instead of shrinking to fit. " +
    `Fix: ${fixes.join(", or ")}.`;
}

function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}
