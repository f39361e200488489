/**
 * The memory floor (spec 023): whatever the budget, a model whose context leaves out older history still sees that
 * the history exists and how to reach it. One user message at the start of the context: a line saying how many
 * messages the conversation has stored and which tools read them, and the newest summary that did not fit, shortened
 * to the room the floor has. Without a summary (nothing compacted yet) the line alone. It is built at assembly from
 * stored text only (no model call), and renders the same bytes for the same inputs.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { SummaryRecord } from "../records.js";
import { prefixWithin } from "../tokens/text-within.js";
import { renderSummaryXml } from "./summary-message.js";

/** The most the floor costs: a few hundred tokens, the newest summary shortened to fit. */
export const MEMORY_FLOOR_TOKENS = 320;
/** What the floor's message costs beyond its text (the same framing a stored message is counted with). */
const MESSAGE_FRAMING_TOKENS = 4;
/** Below this much room for a summary's text, the floor is the line alone. */
const MINIMUM_SUMMARY_TEXT_TOKENS = 48;

export interface MemoryFloorInput {
  /** Messages the conversation has stored (shown and not). */
  storedMessages: number;
  /** The newest summary older than what the context shows, if any. */
  summary: SummaryRecord | null;
  /** Most tokens the floor may cost (at most MEMORY_FLOOR_TOKENS); the line is kept whatever this says. */
  roomTokens: number;
  /** When the newest history the floor stands for happened (ms): the message's date, as OpenClaw shows it. */
  timestamp: number;
  tokens: TokenEstimator;
}

export interface MemoryFloor {
  message: AgentMessage;
  tokens: number;
  /** "summary": the line and a (possibly shortened) summary; "line": the line alone. */
  kind: "summary" | "line";
  summaryId: string | null;
}

/** The line every floor carries: how much is stored and how to reach it. */
export function floorLine(storedMessages: number): string {
  return `This conversation has ${storedMessages.toLocaleString("en-US")} stored messages; the older ones are not shown ` +
    "here. Nothing was deleted: lcm_grep searches all of them, lcm_describe reads a summary (sum_...) or stored file " +
    "in full, lcm_expand_query answers a question from the full detail.";
}

/** What the floor costs when it is the line alone. */
export function lineFloorTokens(storedMessages: number, tokens: TokenEstimator): number {
  return cost(wrap(floorLine(storedMessages), ""), tokens);
}

export function buildMemoryFloor(input: MemoryFloorInput): MemoryFloor {
  const { tokens } = input;
  const room = Math.min(MEMORY_FLOOR_TOKENS, Math.floor(input.roomTokens));
  const line = floorLine(input.storedMessages);
  const lineOnly = wrap(line, "");
  const summary = input.summary;
  if (summary) {
    const withWhole = wrap(line, renderSummaryXml(summary));
    if (cost(withWhole, tokens) <= room) return floorOf(withWhole, input, summary);
    // Short of room, a condensed summary goes without its list of parents (lcm_describe lists them): with a dozen
    // of them, the list alone left no room for any text, and the floor fell back to its line (8k host suite).
    const bare = { ...summary, parentSummaryIds: [] };
    const withBare = wrap(line, renderSummaryXml(bare));
    if (cost(withBare, tokens) <= room) return floorOf(withBare, input, summary);
    // The estimate of a whole text is not the sum of its parts': shorten again by what the first try overshot.
    let textRoom = room - cost(wrap(line, renderSummaryXml({ ...bare, content: shortened("") })), tokens);
    for (let attempt = 0; attempt < 3 && textRoom >= MINIMUM_SUMMARY_TEXT_TOKENS; attempt++) {
      const head = prefixWithin(summary.content.trim(), textRoom, tokens);
      const text = wrap(line, renderSummaryXml({ ...bare, content: shortened(head) }));
      const over = cost(text, tokens) - room;
      if (over <= 0) return floorOf(text, input, summary);
      textRoom -= over;
    }
  }
  return floorOf(lineOnly, input, null);
}

function wrap(line: string, summaryXml: string): string {
  return `<earlier_history>\n${line}${summaryXml ? `\nThe newest summary of them:\n${summaryXml}` : ""}\n</earlier_history>`;
}

/** A summary's head, marked as shortened with the way to read it whole. */
function shortened(head: string): string {
  return `${head.trimEnd()}\n[... shortened to fit the context window; lcm_describe with this summary's id reads it in full]`;
}

function cost(text: string, tokens: TokenEstimator): number {
  return tokens.estimate(text) + MESSAGE_FRAMING_TOKENS;
}

/** The floor's message, dated by the newest history it stands for (OpenClaw shows a user message's date to the model). */
function floorOf(text: string, input: MemoryFloorInput, summary: SummaryRecord | null): MemoryFloor {
  return {
    message: { role: "user", content: text, timestamp: input.timestamp },
    tokens: cost(text, input.tokens),
    kind: summary ? "summary" : "line",
    summaryId: summary?.summaryId ?? null,
  };
}

