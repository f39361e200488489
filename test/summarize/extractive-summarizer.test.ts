import { describe, expect, it } from "vitest";
import { renderMessageSources } from "../../src/compaction/source-text.js";
import type { MessageRecord } from "../../src/records.js";
import { ExtractiveSummarizer } from "../../src/summarize/extractive-summarizer.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";

const tokens = new DefaultTokenEstimator();

function message(seq: number, role: string, content: string): MessageRecord {
  return {
    messageId: seq, conversationId: 1, seq, role, content, tokenCount: tokens.estimate(content) + 4,
    createdAt: Date.UTC(2026, 10, 1, 8, seq), identityKey: `k${seq}`, flags: 0, meta: "{}", parts: [],
  };
}

const SOURCE = renderMessageSources([
  message(1, "user", "Deploy failed again. Can you check /srv/app/config/deploy.yaml and the run at https://ci.example.com/runs/4821?"),
  message(2, "assistant", "[tool call read_file]\n{\"path\":\"/srv/app/config/deploy.yaml\"}"),
  message(3, "toolResult", "Error: ECONNREFUSED 10.0.0.12:5432 while running migration 0042_add_ledger.sql\n[tool result read_file]"),
  message(4, "assistant", `The database refused connections. Commit 9f3c2a1b7e fixed the port; bumped to v2.14.3 and set ERR_RETRY_LIMIT to 5000. ${"filler text ".repeat(60)}`),
  message(5, "user", `Thanks, that worked. ${"more chatter ".repeat(80)}`),
]);

describe("ExtractiveSummarizer", () => {
  const summarizer = new ExtractiveSummarizer({ tokens });

  it("keeps exact identifiers: paths, URLs, hashes, versions, error strings and numbers", async () => {
    const summary = await summarizer.summarize({ sourceText: SOURCE, depth: 0, mode: "normal", targetTokens: 400 });
    for (const identifier of [
      "/srv/app/config/deploy.yaml", "https://ci.example.com/runs/4821", "9f3c2a1b7e", "v2.14.3", "ERR_RETRY_LIMIT",
      "ECONNREFUSED 10.0.0.12:5432", "0042_add_ledger.sql", "5000",
    ]) {
      expect(summary).toContain(identifier);
    }
    expect(summary).toMatch(/^- 2026-11-01 08:01 UTC user: Deploy failed again\./);
  });

  it("is smaller than its input, fits its target, and ends with the expand line", async () => {
    for (const targetTokens of [100, 200, 400]) {
      for (const mode of ["normal", "aggressive"] as const) {
        const summary = await summarizer.summarize({ sourceText: SOURCE, depth: 0, mode, targetTokens });
        expect(tokens.estimate(summary), `${mode} ${targetTokens}`).toBeLessThanOrEqual(targetTokens);
        expect(tokens.estimate(summary)).toBeLessThan(tokens.estimate(SOURCE));
        expect(summary.split("\n").at(-1)).toMatch(/^Expand for details about: /);
      }
    }
  });

  it("keeps its most informative entry even when that alone is over the target (the caller's escalation truncates)", async () => {
    const summary = await summarizer.summarize({ sourceText: SOURCE, depth: 0, mode: "aggressive", targetTokens: 30 });
    const entries = summary.split("\n").filter((line) => /^- \d{4}-/.test(line));
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatch(/user: Deploy failed again\./);
    expect(summary).toContain("- (4 less informative entries omitted)");
    expect(tokens.estimate(summary)).toBeGreaterThan(30);
  });

  it("gives the same output for the same input", async () => {
    const request = { sourceText: SOURCE, depth: 1, mode: "normal" as const, targetTokens: 200 };
    expect(await summarizer.summarize(request)).toBe(await summarizer.summarize(request));
  });

  it("keeps the error sentence of a long line without periods, and reads such a line in one pass", async () => {
    // 400 KB of JSON on one line, no period before the error: a pattern that backtracks per start position would
    // take minutes here (and blocked 0.5 s per summary on shorter lines).
    const record = JSON.stringify(Array.from({ length: 8_000 }, (_, row) => ({ row, state: "ok", note: "steady as before" })));
    const line = `${record.slice(0, -1)}, "last": "migration 0042 failed: lock wait timeout exceeded"]`;
    const source = renderMessageSources([message(1, "toolResult", line), message(2, "assistant", "Looked at it. Retrying now.")]);
    const summary = await summarizer.summarize({ sourceText: source, depth: 0, mode: "normal", targetTokens: 4_000 });
    expect(summary).toContain("migration 0042 failed: lock wait timeout exceeded");
  });
});
