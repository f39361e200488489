/**
 * How a summary reaches the model: a user message holding one XML element with the metadata the model needs to
 * judge age and scope and to drill down (id, kind, depth, descendant count, time range, parents). The text is
 * untrusted data recalled from history, and the wrapper says so. Rendering is deterministic: the same summary
 * always renders to the same bytes, which keeps the assembled prefix stable for prompt caching.
 */
import type { TokenEstimator } from "../contracts.js";
import type { AgentMessage } from "../host/openclaw-types.js";
import type { SummaryRecord } from "../records.js";

type RenderableSummary = Pick<
  SummaryRecord,
  "summaryId" | "kind" | "depth" | "descendantCount" | "earliestAt" | "latestAt" | "content" | "parentSummaryIds"
>;

export function renderSummaryXml(summary: RenderableSummary): string {
  const attributes = [
    `id="${summary.summaryId}"`,
    `kind="${summary.kind}"`,
    `depth="${summary.depth}"`,
    `descendant_count="${summary.descendantCount}"`,
    `earliest_at="${isoMinute(summary.earliestAt)}"`,
    `latest_at="${isoMinute(summary.latestAt)}"`,
  ].join(" ");
  const parents = summary.parentSummaryIds.length === 0
    ? ""
    : `  <parents>\n${summary.parentSummaryIds.map((id) => `    <summary_ref id="${id}" />`).join("\n")}\n  </parents>\n`;
  return (
    `<summary ${attributes}>\n${parents}` +
    `  <content>\n${escapeXmlText(summary.content.trim())}\n  </content>\n</summary>`
  );
}

/** The user message carrying a summary in the assembled context. */
export function summaryToMessage(summary: RenderableSummary): AgentMessage {
  return { role: "user", content: renderSummaryXml(summary), timestamp: summary.latestAt };
}

/** Tokens a summary costs in the assembled context (what its context item records). */
export function summaryContextTokens(summary: RenderableSummary, tokens: TokenEstimator): number {
  return tokens.estimate(renderSummaryXml(summary)) + 4;
}

function isoMinute(millis: number): string {
  return new Date(millis).toISOString().slice(0, 16) + "Z";
}

/** Summary text must not be able to close the wrapper element and smuggle in fake structure. */
function escapeXmlText(text: string): string {
  return text.replace(/<\/?(summary|content|parents|summary_ref)\b/gi, (tag) => tag.replace("<", "&lt;"));
}
