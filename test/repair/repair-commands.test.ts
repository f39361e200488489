/**
 * `lcm repair` on real databases made by the engine: previews write nothing, --apply writes one repair with its undo
 * record, `lcm doctor` is clean before and after, and undo restores every row of the DAG and the context exactly.
 */
import { describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { runLcm } from "../cli/cli-harness.js";
import { dagRows, fallbackDatabase, FAILING_MODEL, recordingModel } from "./repair-fixture.js";

type Rows = ReturnType<typeof dagRows>;
const summaryRow = (rows: Rows, summaryId: string) => rows.summaries.find((row) => (row as { summary_id: string }).summary_id === summaryId) as Record<string, unknown>;

async function json(args: string[], extra: Parameters<typeof runLcm>[2] = {}, code: number = EXIT.ok) {
  const run = await runLcm([...args, "--json"], {}, extra);
  expect(run.code, run.stderr).toBe(code);
  return JSON.parse(run.stdout) as Record<string, any>;
}

/** A fallback leaf the context shows, and a condensed summary the context shows. */
function targets(harness: Awaited<ReturnType<typeof fallbackDatabase>>) {
  const leaf = harness.db.get<{ summary_id: string }>(
    "SELECT s.summary_id FROM summaries s JOIN context_items c ON c.summary_id = s.id WHERE s.kind = 'leaf' AND s.level = 'fallback' ORDER BY c.ordinal LIMIT 1")!.summary_id;
  const condensed = harness.db.get<{ summary_id: string }>(
    "SELECT s.summary_id FROM summaries s JOIN context_items c ON c.summary_id = s.id WHERE s.kind = 'condensed' ORDER BY c.ordinal LIMIT 1")!.summary_id;
  return { leaf, condensed };
}

describe("lcm repair resummarize", () => {
  it("shows the stored and the new text side by side and writes nothing without --apply", async () => {
    const harness = await fallbackDatabase();
    const { leaf } = targets(harness);
    const before = dagRows(harness.db);
    const model = recordingModel();
    const run = await runLcm(["repair", "resummarize", leaf, "--db", harness.databasePath], {}, { model });
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/now · fallback · \d+ tokens\s+│ new · normal · \d+ tokens · model:host-llm/);
    expect(run.stdout).toContain("│ Model summary 1");
    expect(run.stdout).toContain("Preview only: nothing was written");
    expect(model.calls).toHaveLength(1);
    const firstSource = harness.db.get<{ content: string }>(
      `SELECT m.content FROM summaries s JOIN summary_messages sm ON sm.summary_id = s.id JOIN messages m ON m.message_id = sm.message_id
       WHERE s.summary_id = ? ORDER BY sm.ordinal LIMIT 1`, leaf)!.content;
    expect(String(model.calls[0]!.messages.at(-1)!.content)).toContain(firstSource);
    expect(dagRows(harness.db)).toEqual(before);
  });

  it("--apply re-summarizes in one recorded repair, doctor is clean before and after, and undo restores the rows exactly", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    const { leaf } = targets(harness);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    const before = dagRows(harness.db);

    const applied = await json(["repair", "resummarize", leaf, "--apply", "--db", db], { model: recordingModel() });
    expect(applied).toMatchObject({ applied: true, outcome: { repairId: 1, kind: "resummarize", summaryId: leaf, findings: { before: 0, after: 0 } } });
    const after = dagRows(harness.db);
    expect(summaryRow(after, leaf)).toMatchObject({ level: "normal", written_by: "model:host-llm" });
    expect(summaryRow(after, leaf).content).toMatch(/^Model summary 1: quarzite1 questions were asked and answered\.\n\nExpand for details about: /);
    // The context item costs what the new text costs, and the conversation's total follows.
    const delta = applied.proposal.new.contextTokenCount - applied.proposal.old.contextTokenCount;
    expect(delta).toBeLessThan(0);
    expect((after.conversations[0] as { context_tokens: number }).context_tokens).toBe((before.conversations[0] as { context_tokens: number }).context_tokens + delta);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    // Search reads the new text, not the old one.
    expect((await json(["grep", "quarzite1", "--mode", "full_text", "--scope", "summaries", "--db", db])).matches).toHaveLength(1);

    const undone = await json(["repair", "undo", "1", "--db", db]);
    expect(undone.undone).toMatchObject({ repairId: 1, kind: "resummarize" });
    expect(dagRows(harness.db)).toEqual(before);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    expect((await json(["grep", "quarzite1", "--mode", "full_text", "--scope", "summaries", "--db", db])).matches).toHaveLength(0);
    expect((await runLcm(["repair", "undo", "1", "--db", db])).code).toBe(EXIT.usage);
  });

  it("without a model says how to get one, and a failing model changes nothing", async () => {
    const harness = await fallbackDatabase();
    const { leaf } = targets(harness);
    const before = dagRows(harness.db);
    const none = await runLcm(["repair", "resummarize", leaf, "--apply", "--db", harness.databasePath]);
    expect(none.code).toBe(EXIT.internal);
    expect(none.stderr).toMatch(/No model to re-summarize with: .*ANTHROPIC_API_KEY/);
    const failing = await runLcm(["repair", "resummarize", leaf, "--apply", "--db", harness.databasePath], {}, { model: FAILING_MODEL });
    expect(failing.code).toBe(EXIT.internal);
    expect(failing.stderr).toMatch(/The model gave no usable summary .* nothing changes: normal: failed/);
    expect(dagRows(harness.db)).toEqual(before);
    expect((await runLcm(["repair", "resummarize", "sum_0000000000000000", "--db", harness.databasePath], {}, { model: recordingModel() })).code).toBe(EXIT.notFound);
  });
});

describe("lcm repair rewrite", () => {
  it("writes a hand-written text, and refuses an empty or oversized one with nothing changed", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    const { leaf } = targets(harness);
    const before = dagRows(harness.db);
    const empty = await runLcm(["repair", "rewrite", leaf, "--text", "   ", "--apply", "--db", db]);
    expect(empty.code).toBe(EXIT.usage);
    expect(empty.stderr).toContain("The new text is empty");
    const huge = await runLcm(["repair", "rewrite", leaf, "--text", "word ".repeat(2_000), "--apply", "--db", db]);
    expect(huge.code).toBe(EXIT.usage);
    expect(huge.stderr).toMatch(/more than the \d+ tokens it summarizes/);
    expect((await runLcm(["repair", "rewrite", leaf, "--db", db])).code).toBe(EXIT.usage);
    expect(dagRows(harness.db)).toEqual(before);

    const applied = await json(["repair", "rewrite", leaf, "--text", "Questions t1 to t4 about markers, each answered.", "--apply", "--db", db]);
    expect(applied.outcome).toMatchObject({ kind: "rewrite", findings: { after: 0 } });
    expect(summaryRow(dagRows(harness.db), leaf)).toMatchObject({ level: "normal", written_by: "hand", content: "Questions t1 to t4 about markers, each answered." });
    const listed = await json(["repair", "list", "--db", db]);
    expect(listed.repairs).toMatchObject([{ repairId: 1, kind: "rewrite", summaryId: leaf, undoneAt: null }]);
  });

  it("refuses to undo a repair a later one of the same conversation builds on", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    const { leaf } = targets(harness);
    await json(["repair", "rewrite", leaf, "--text", "First rewrite.", "--apply", "--db", db]);
    await json(["repair", "rewrite", leaf, "--text", "Second rewrite.", "--apply", "--db", db]);
    const refused = await runLcm(["repair", "undo", "1", "--db", db]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain("repair 2 of the same conversation came later: undo it first");
    expect(summaryRow(dagRows(harness.db), leaf)).toMatchObject({ content: "Second rewrite." });
    await json(["repair", "undo", "2", "--db", db]);
    await json(["repair", "undo", "1", "--db", db]);
    expect(summaryRow(dagRows(harness.db), leaf)).toMatchObject({ level: "fallback", written_by: null });
  });
});

describe("lcm repair dissolve", () => {
  it("puts a condensed summary's parents back in its place in the context, and undo restores the rows exactly", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    const { condensed, leaf } = targets(harness);
    const before = dagRows(harness.db);
    const preview = await json(["repair", "dissolve", condensed, "--db", db]);
    expect(preview.applied).toBe(false);
    expect(preview.proposal.parents.length).toBeGreaterThanOrEqual(2);
    expect(dagRows(harness.db)).toEqual(before);

    const applied = await json(["repair", "dissolve", condensed, "--apply", "--db", db]);
    expect(applied.outcome.findings).toEqual({ before: 0, after: 0 });
    const shown = harness.db.all<{ summary_id: string }>(
      "SELECT s.summary_id FROM context_items c JOIN summaries s ON s.id = c.summary_id ORDER BY c.ordinal").map((row) => row.summary_id);
    expect(shown).not.toContain(condensed);
    expect(shown.slice(0, applied.proposal.parents.length)).toEqual(applied.proposal.parents.map((parent: { summaryId: string }) => parent.summaryId));
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    expect((await runLcm(["repair", "dissolve", leaf, "--db", db])).stderr).toContain("is a leaf summary");
    expect((await runLcm(["repair", "dissolve", condensed, "--db", db])).stderr).toContain("is not in the context");

    await json(["repair", "undo", "1", "--db", db]);
    expect(dagRows(harness.db)).toEqual(before);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
  });

  it("moves later context items when their ordinals leave no room, and undo moves them back", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    // Consecutive ordinals (as a context never compacted around them has): no gap after the summary's item.
    harness.db.raw.exec(`UPDATE context_items SET ordinal = ordinal + 1000000;
      UPDATE context_items SET ordinal = (SELECT count(*) FROM context_items c2 WHERE c2.conversation_id = context_items.conversation_id AND c2.ordinal <= context_items.ordinal)`);
    const { condensed } = targets(harness);
    const before = dagRows(harness.db);
    const applied = await json(["repair", "dissolve", condensed, "--apply", "--db", db]);
    expect(applied.outcome.findings.after).toBe(0);
    const items = harness.db.all<{ ordinal: number }>("SELECT ordinal FROM context_items ORDER BY ordinal").map((row) => row.ordinal);
    expect(items.length).toBe(before.context_items.length + applied.proposal.parents.length - 1);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
    await json(["repair", "undo", "1", "--db", db]);
    expect(dagRows(harness.db)).toEqual(before);
  });
});

describe("lcm repair fallbacks", () => {
  it("lists the fallback summaries and --apply redoes them with the model, each one recorded", async () => {
    const harness = await fallbackDatabase();
    const db = harness.databasePath;
    const total = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE level = 'fallback'")!.n;
    expect(total).toBeGreaterThan(3);
    const listed = await json(["repair", "fallbacks", "--db", db]);
    expect(listed.fallbacks).toHaveLength(Math.min(total, 20));
    const model = recordingModel();
    const redone = await json(["repair", "fallbacks", "--apply", "--limit", "3", "--db", db], { model });
    expect(redone.redo).toMatchObject({ found: 3, stopped: null });
    expect(redone.redo.redone).toHaveLength(3);
    expect(model.calls).toHaveLength(3);
    expect(harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE level = 'fallback'")!.n).toBe(total - 3);
    expect((await json(["repair", "list", "--db", db])).repairs).toHaveLength(3);
    const stopped = await runLcm(["repair", "fallbacks", "--apply", "--db", db], {}, { model: FAILING_MODEL });
    expect(stopped.code).toBe(EXIT.internal);
    expect(stopped.stdout).toMatch(/Redid 0 of \d+ fallback summaries\.\nStopped: The model gave no usable summary/);
    expect((await runLcm(["doctor", "--db", db])).code).toBe(EXIT.ok);
  });
});
