/**
 * The documented restore of a conversation retention archived whole (docs/operations.md#retention): `lcm import jsonl`
 * of the archive (gzip, header line and all), or of its export block after `zcat | tail -n +2`. Messages holding
 * U+2028/U+2029 come back whole; the next retention run leaves the restored conversation alone (restored_at), and it
 * goes again only once it has aged as the policy says (retention-policy.ts restoredCutoff).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ImportJsonlOutputSchema } from "../../src/cli/output-schemas.js";
import { RESTORE_HOLD_MS } from "../../src/retention/retention-policy.js";
import { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";
import { runJson } from "../cli/cli-harness.js";
import { DAY, NOW, retentionSetup, storeExchanges, summarize } from "./retention-helpers.js";

/** An ended conversation (with line and paragraph separators in its text) archived whole by a first run; its archive path. */
async function archivedWhole(config: Record<string, unknown>) {
  const setup = retentionSetup(config);
  const gone = await storeExchanges(setup, "gone", 15, "a line\u2028separator and a paragraph\u2029separator");
  summarize(setup, gone, 1, 20);
  await new SqliteSearchIndex(setup.db).indexPending();
  setup.db.run("UPDATE conversations SET ended_at = ?, updated_at = ?, end_reason = 'deleted' WHERE conversation_id = ?", NOW - 40 * DAY, NOW - 40 * DAY, gone);
  const report = await setup.service.run({ apply: true });
  expect(report.conversations).toHaveLength(1);
  return { setup, archive: report.conversations[0]!.archivePath! };
}

const restoredIds = (setup: ReturnType<typeof retentionSetup>) =>
  setup.db.all<{ id: number }>("SELECT conversation_id AS id FROM conversations WHERE session_id = 'gone'").map((row) => row.id);

describe("restoring a conversation retention archived whole", () => {
  it("imports the archive itself, separators intact, and the next run leaves it until it has aged 30 days (no age cap)", async () => {
    const { setup, archive } = await archivedWhole({ retentionPruneEndedSessions: true });
    const restored = await runJson<{ imported: number; conversations: { conversationId: number; messages: number }[] }>(
      ["import", "jsonl", archive, "--db", setup.config.databasePath, "--apply"], ImportJsonlOutputSchema, { environment: { clock: setup.clock } },
    );
    expect(restored).toMatchObject({ imported: 1, conversations: [{ messages: 30 }] });
    const id = restored.conversations[0]!.conversationId;
    expect(setup.db.get<{ content: string }>("SELECT content FROM messages WHERE conversation_id = ? AND seq = 1", id)!.content)
      .toContain("a line\u2028separator and a paragraph\u2029separator");

    // The next background run, 10 minutes later: nothing to archive.
    setup.clock.current += 10 * 60_000;
    expect((await setup.service.run({ apply: true })).conversations).toEqual([]);
    expect(restoredIds(setup)).toEqual([id]);
    expect((await setup.checker.check()).findings).toEqual([]);

    // Once the hold is over, the conversation (still ended) goes again, as any other would.
    setup.clock.current += RESTORE_HOLD_MS;
    expect((await setup.service.run({ apply: true })).conversations).toEqual([expect.objectContaining({ conversationId: id })]);
    expect(restoredIds(setup)).toEqual([]);
  });

  it("holds the export block of `zcat | tail -n +2` as long as the age cap, its messages unpruned meanwhile", async () => {
    const { setup, archive } = await archivedWhole({ retentionPruneEndedSessions: true, retentionMaxAgeDays: 30 });
    const block = gunzipSync(readFileSync(archive)).toString("utf8").split("\n").slice(1).join("\n");
    const file = join(setup.directory, "conversation.jsonl");
    writeFileSync(file, block);
    const restored = await runJson<{ conversations: { conversationId: number }[] }>(
      ["import", "jsonl", file, "--db", setup.config.databasePath, "--apply"], ImportJsonlOutputSchema, { environment: { clock: setup.clock } },
    );
    const id = restored.conversations[0]!.conversationId;
    setup.clock.current += 29 * DAY;
    const held = await setup.service.run({ apply: true });
    expect([held.conversations, held.messages.count]).toEqual([[], 0]);
    expect(setup.db.get<{ n: number }>("SELECT count(*) AS n FROM messages WHERE conversation_id = ? AND archive_id IS NULL", id)!.n).toBe(30);
    setup.clock.current += 2 * DAY;
    expect((await setup.service.run({ apply: true })).conversations).toEqual([expect.objectContaining({ conversationId: id })]);
  });
});
