/**
 * Renders the sources of a pass as the text the summarizer reads: raw messages with a timestamp and role, or
 * summaries with their time range. Deterministic. A single message far larger than a chunk keeps its head and
 * tail with a visible omission note, so one pasted log cannot make the summarizer's input unbounded.
 */
import type { MessageRecord, SummaryRecord } from "../records.js";

/** Longest message text (in characters) passed to the summarizer whole, unless the caller bounds it lower. */
export const MAX_MESSAGE_SOURCE_CHARS = 60_000;

export function renderMessageSources(messages: readonly MessageRecord[], maxMessageChars = MAX_MESSAGE_SOURCE_CHARS): string {
  const limit = Math.min(maxMessageChars, MAX_MESSAGE_SOURCE_CHARS);
  const minuteOf = lastMinuteFormatter();
  return messages.map((message) => `[${minuteOf(message.createdAt)}] ${roleLabel(message)}:\n${bounded(message.content, limit)}`).join("\n\n");
}

export function renderSummarySources(summaries: readonly SummaryRecord[]): string {
  return summaries
    .map(
      (summary) =>
        `[${formatMinute(summary.earliestAt)} to ${formatMinute(summary.latestAt)}] summary ${summary.summaryId} (depth ${summary.depth}):\n` +
        summary.content.trim(),
    )
    .join("\n\n");
}

/** "2026-11-01 08:00 UTC": minute precision is what a summary's reader needs. */
export function formatMinute(millis: number): string {
  const iso = new Date(millis).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** formatMinute that remembers the last minute it formatted: most messages of a chunk share the minute of the one before. */
function lastMinuteFormatter(): (millis: number) => string {
  let lastMinute = Number.NaN;
  let lastText = "";
  return (millis) => {
    const minute = Math.floor(millis / 60_000);
    if (minute !== lastMinute) {
      lastText = formatMinute(millis);
      lastMinute = minute;
    }
    return lastText;
  };
}

function roleLabel(message: MessageRecord): string {
  if (message.role === "toolResult") return "tool result";
  return message.role;
}

function bounded(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor(limit / 2);
  const omitted = text.length - 2 * half;
  return `${text.slice(0, half)}\n[... ${omitted} characters omitted here; the full message is stored ...]\n${text.slice(-half)}`;
}
