/**
 * A bounded text builder for exploration summaries. Every explorer writes through it, so no summary can outgrow
 * its budget whatever the input (a 2 MB JSON document has as many keys as it likes): lines are clipped, lists
 * say how many items they left out, and the whole text stops at the character budget.
 */

/** About 400 tokens of English or code: "a few hundred tokens" with room for the reference line. */
export const MAX_SUMMARY_CHARS = 1_600;

export class SummaryLines {
  private readonly lines: string[] = [];
  private length = 0;
  private full = false;

  constructor(private readonly budget = MAX_SUMMARY_CHARS) {}

  /** Adds a line (clipped to `maxChars`); ignored once the budget is used up. Returns false when it did not fit. */
  add(line: string, maxChars = 240): boolean {
    if (this.full) return false;
    const clipped = clip(line, maxChars);
    const cost = clipped.length + (this.lines.length > 0 ? 1 : 0);
    if (this.length + cost > this.budget) {
      const room = this.budget - this.length - (this.lines.length > 0 ? 1 : 0);
      if (room > 20) this.lines.push(clip(clipped, room));
      this.full = true;
      return false;
    }
    this.lines.push(clipped);
    this.length += cost;
    return true;
  }

  /** Adds "label: a, b, c … and N more" within one line of `maxChars`. */
  addList(label: string, items: readonly string[], maxChars = 400): boolean {
    if (items.length === 0) return true;
    let line = `${label}:`;
    let shown = 0;
    for (const item of items) {
      const next = `${line}${shown === 0 ? " " : ", "}${item}`;
      const remaining = items.length - shown - 1;
      const tail = remaining > 0 ? ` … and ${remaining} more` : "";
      if (next.length + tail.length > maxChars && shown > 0) break;
      line = next;
      shown++;
    }
    if (shown < items.length) line += ` … and ${items.length - shown} more`;
    return this.add(line, maxChars + 40);
  }

  /** Chars left before the budget is reached. */
  get remaining(): number {
    return this.full ? 0 : this.budget - this.length;
  }

  text(): string {
    return this.lines.join("\n");
  }
}

/** Shortens `text` to at most `maxChars` characters, marking the cut with "…". */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  if (maxChars <= 1) return "…".slice(0, maxChars);
  return `${text.slice(0, maxChars - 1)}…`;
}

/** Collapses runs of whitespace (used for samples shown inline). */
export function squash(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
