/**
 * Fallback summaries are redone when a model answers again: maintain (through the plugin's real wiring) re-summarizes
 * a few per turn with the session's model, each recorded as a repair; without a model nothing changes.
 */
import { describe, expect, it } from "vitest";
import plugin from "../../index.js";
import { FALLBACK_REDO_PER_TURN } from "../../src/repair/fallback-redo.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { fallbackDatabase, recordingModel, SESSION, SMALL_DAG_CONFIG } from "./repair-fixture.js";

const fallbackCount = (harness: Awaited<ReturnType<typeof fallbackDatabase>>) =>
  harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE level = 'fallback'")!.n;

describe("fallback summaries redone by maintain", () => {
  it("re-summarizes at most FALLBACK_REDO_PER_TURN per turn with the session's model, each one a recorded repair", async () => {
    const harness = await fallbackDatabase();
    const before = fallbackCount(harness);
    const api = new FakePluginApi({ databasePath: harness.databasePath, ...SMALL_DAG_CONFIG, autocompactDisabled: true });
    plugin.register(api);

    // No model: the extractive summarizer is not a model, so nothing is redone.
    await api.engine().maintain!({ ...SESSION, sessionFile: "" });
    expect(fallbackCount(harness)).toBe(before);

    const model = recordingModel();
    await api.engine().maintain!({ ...SESSION, sessionFile: "", runtimeContext: { llm: model } });
    expect(model.calls).toHaveLength(FALLBACK_REDO_PER_TURN);
    expect(fallbackCount(harness)).toBe(before - FALLBACK_REDO_PER_TURN);
    const repairs = harness.db.all<{ kind: string; undone_at: number | null }>("SELECT kind, undone_at FROM summary_repairs");
    expect(repairs).toEqual([{ kind: "resummarize", undone_at: null }, { kind: "resummarize", undone_at: null }]);
    expect(harness.db.all("SELECT written_by FROM summaries WHERE written_by IS NOT NULL")).toEqual([
      { written_by: "model:host-llm" }, { written_by: "model:host-llm" },
    ]);
    expect(api.logs.some((line) => line.message.includes(`re-summarized ${FALLBACK_REDO_PER_TURN} fallback summaries`))).toBe(true);
  });

  it("waits after a redo the model could not do, instead of spending model calls on it every turn", async () => {
    const harness = await fallbackDatabase();
    const before = fallbackCount(harness);
    const api = new FakePluginApi({ databasePath: harness.databasePath, ...SMALL_DAG_CONFIG, autocompactDisabled: true });
    plugin.register(api);
    // Answers, but far longer than any source: no usable summary.
    const rambling = recordingModel(() => "a long ramble about everything ".repeat(2_000));
    await api.engine().maintain!({ ...SESSION, sessionFile: "", runtimeContext: { llm: rambling } });
    const tried = rambling.calls.length;
    expect(tried).toBeGreaterThan(0);
    expect(fallbackCount(harness)).toBe(before);
    for (let turn = 0; turn < 3; turn++) await api.engine().maintain!({ ...SESSION, sessionFile: "", runtimeContext: { llm: rambling } });
    expect(rambling.calls.length).toBe(tried); // waiting (10 minutes, then longer): no call on the next turns
    expect(fallbackCount(harness)).toBe(before);
  });
});
