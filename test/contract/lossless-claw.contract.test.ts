/**
 * `lcm import lossless-claw` on either backend (PeerImportStore, and bootstrap's ImportedHistoryStore on the backend's
 * store): the peer's database (1.x line: a compacted conversation with a tool call, a thinking block, stored files,
 * an archived conversation) imported into an empty database holds exactly the rows the SQLite import holds, ids
 * included; a second run imports nothing; an import stopped after its first transaction finishes on the next run
 * with the same rows; the imported messages wait for the transcript's matches, which are saved and end the wait.
 */
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LargeFileStorage } from "../../src/large-files/large-file-storage.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import type { ImportedHistoryStore } from "../../src/store/imported-history-store.js";
import { COPIED_TABLES, type CopiedRow, STORED_PATH_COLUMN } from "../../src/store/table-copy.js";
import { importLosslessClaw } from "../../src/transfer/lossless-claw/lossless-claw-import.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { SteppingClock } from "../fakes/clocks.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { backendSql } from "../helpers/backend-sql.js";
import { tempDir } from "../helpers/temp-dir.js";
import { buildPeerScenario, type PeerScenario } from "../transfer/lossless-claw/peer-scenario.js";

function importInto(backend: LcmBackend, scenario: PeerScenario, filesRoot: string, extra: { signal?: AbortSignal; onTransaction?: () => void } = {}) {
  return importLosslessClaw({
    sourcePath: scenario.path, store: backend.peerImport, files: new LargeFileStorage(filesRoot), tokens: new DefaultTokenEstimator(),
    clock: new SteppingClock(), sliceMs: 0, ...extra,
  });
}

/** Every row of the model, a stored file's path reduced to what follows its files folder. */
async function rowsOf(backend: LcmBackend, filesRoot: string): Promise<Record<string, CopiedRow[]>> {
  const tables: Record<string, CopiedRow[]> = {};
  for (const table of COPIED_TABLES) {
    const index = table.name === STORED_PATH_COLUMN.table ? table.columns.indexOf(STORED_PATH_COLUMN.column) : -1;
    tables[table.name] = (await backend.tableCopy.readRows(table, null, 100_000))
      .map((row) => row.map((value, column) => (column === index ? String(value).replace(filesRoot, "<files>") : value)));
  }
  return tables;
}

describe.each(backendKinds())("lossless-claw import on %s", (kind) => {
  let opened: TestBackend;
  beforeEach(async () => {
    opened = await openTestBackend(kind);
  });
  afterEach(async () => {
    await opened.close();
  });

  it("writes exactly the rows the SQLite import writes, and a second run writes nothing", async () => {
    const scenario = buildPeerScenario("1.x", { files: true });
    const filesRoot = tempDir("files-");
    const report = await importInto(opened.backend, scenario, filesRoot);
    expect(report.written).toMatchObject({ messages: scenario.messages + 1, summaries: 3, summaryMessages: 12, summaryParents: 2, largeFiles: 3 });
    expect(report.conversations).toMatchObject({ imported: 2, archived: 1 });
    if (kind === "postgres") {
      // PostgreSQL keeps each stored file's content with its row (migration 8), for gateways on other machines: the
      // notes and the image; the report whose content the peer lost has none.
      expect(await backendSql(opened).rows("SELECT count(*)::int AS kept FROM large_file_content c JOIN large_files l USING (file_id) WHERE length(c.content) = l.byte_size"))
        .toEqual([{ kept: 2 }]);
    }

    const reference = openSqliteBackend(join(tempDir(), "reference.db"), "private");
    const referenceFiles = tempDir("files-");
    try {
      expect(report).toMatchObject({ written: (await importInto(reference, scenario, referenceFiles)).written });
      const rows = await rowsOf(opened.backend, filesRoot);
      expect(rows.import_map!.length).toBeGreaterThan(scenario.messages);
      expect(rows).toEqual(await rowsOf(reference, referenceFiles));
    } finally {
      await reference.close();
    }

    const again = await importInto(opened.backend, scenario, filesRoot);
    expect(again.conversations).toMatchObject({ imported: 0, alreadyImported: 2 });
    expect(again.written).toMatchObject({ messages: 0, summaries: 0, contextItems: 0, largeFiles: 0 });
  });

  it("stopped after its first transaction, finishes on the next run with the same rows as one run", async () => {
    const scenario = buildPeerScenario("1.x");
    const filesRoot = tempDir("files-");
    const controller = new AbortController();
    await expect(importInto(opened.backend, scenario, filesRoot, { signal: controller.signal, onTransaction: () => controller.abort() })).rejects.toThrow();
    const partial = await rowsOf(opened.backend, filesRoot);
    expect(partial.summaries).toEqual([]);
    const resumed = await importInto(opened.backend, scenario, filesRoot);
    expect(resumed.conversations.resumed).toBe(1);

    const whole = await openTestBackend(kind);
    try {
      const wholeFiles = tempDir("files-");
      await importInto(whole.backend, scenario, wholeFiles);
      const [after, once] = [await rowsOf(opened.backend, filesRoot), await rowsOf(whole.backend, wholeFiles)];
      // The same rows; only the times the stepping clock gave each run's writes may differ.
      for (const table of ["messages", "message_parts", "summaries", "summary_messages", "summary_parents", "context_items", "large_files"]) {
        expect(after[table], table).toEqual(once[table]);
      }
      expect(after.import_map!.map((row) => row.slice(0, 5))).toEqual(once.import_map!.map((row) => row.slice(0, 5)));
    } finally {
      await whole.close();
    }
  });

  it("keeps the imported messages waiting for the transcript's matches until bootstrap saves them", async () => {
    const scenario = buildPeerScenario("1.x");
    await importInto(opened.backend, scenario, tempDir("files-"));
    const history = opened.backend.store as LcmBackend["store"] & ImportedHistoryStore;
    const conversationId = (await opened.backend.exports.liveConversationOf(scenario.agentId, "7f1c1e7e-peer-session"))!;
    const waiting = await history.importedMessagesToMatch(conversationId, { includeMatched: false });
    expect(waiting).toHaveLength(scenario.messages);
    expect(waiting!.map((message) => message.createdAt)).toEqual([...waiting!.map((message) => message.createdAt)].sort((a, b) => a - b));

    const bootstrapState = { source: "host" as const, cursor: "c1", importedAt: 1 };
    await history.saveTranscriptMatches(conversationId, { refs: waiting!.slice(0, 3).map((message) => message.ref), restart: false, finished: false, bootstrapState });
    expect(await history.importedMessagesToMatch(conversationId, { includeMatched: false })).toEqual(waiting!.slice(3));
    expect(await history.importedMessagesToMatch(conversationId, { includeMatched: true })).toEqual(waiting);
    await history.saveTranscriptMatches(conversationId, { refs: [], restart: true, finished: false, bootstrapState });
    expect(await history.importedMessagesToMatch(conversationId, { includeMatched: false })).toEqual(waiting);
    await history.saveTranscriptMatches(conversationId, { refs: waiting!.map((message) => message.ref), restart: false, finished: true, bootstrapState });
    expect(await history.importedMessagesToMatch(conversationId, { includeMatched: true })).toBeNull();
    expect((await opened.backend.store.getConversation(conversationId))?.bootstrapState).toEqual(bootstrapState);
  });
});
