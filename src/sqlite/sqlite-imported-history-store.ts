/**
 * Which imported messages the host's transcript has matched (src/ingest/transcript-match.ts), kept in import_map
 * (schema 9) beside the rows an import wrote: a conversation's map row holds `"transcript": "pending"` in its cursor
 * until bootstrap has read the session's transcript to its end once, and each message's map row holds
 * `transcript <match key>` until the transcript matched it, then `matched <match key>`. The import writes both in
 * the transactions that store the rows (sqlite-peer-import-store.ts), so a conversation is never live without them.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "./database.js";
import type { ImportedHistoryStore, ImportedMessageToMatch } from "../store/imported-history-store.js";
import type { BootstrapState, ConversationId } from "../records.js";

const PENDING = "transcript ";
const MATCHED = "matched ";
/** Rows per read of a conversation's imported messages (a 100k-message conversation is read in 20 short reads). */
const PAGE_ROWS = 5_000;

/** import_map.state of an imported message the transcript has not matched yet. */
export function pendingTranscriptMatch(matchKey: string): string {
  return `${PENDING}${matchKey}`;
}

interface ImportedConversation {
  sourceId: number;
  peerKey: string;
}

export class SqliteImportedHistoryStore implements ImportedHistoryStore {
  constructor(private readonly db: Database) {}

  async importedMessagesToMatch(conversationId: ConversationId, options: { includeMatched: boolean }): Promise<ImportedMessageToMatch[] | null> {
    const imported = this.pendingConversation(conversationId);
    if (!imported) return null;
    const { sourceId, peerKey } = imported;
    const candidates: (ImportedMessageToMatch & { seq: number })[] = [];
    for (let after = `${peerKey}/`; ;) {
      const rows = this.db.tuples<[key: string, state: string | null, identityKey: string, createdAt: number, seq: number]>(
        `SELECT i.source_key, i.state, m.identity_key, m.created_at, m.seq
         FROM import_map i JOIN messages m ON m.message_id = i.target_id
         WHERE i.source_id = ? AND i.entity = 'message' AND i.source_key > ? AND i.source_key < ? ORDER BY i.source_key LIMIT ?`,
        sourceId, after, `${peerKey}0`, PAGE_ROWS,
      );
      for (const [key, state, identityKey, createdAt, seq] of rows) {
        const prefix = state?.startsWith(PENDING) ? PENDING : options.includeMatched && state?.startsWith(MATCHED) ? MATCHED : null;
        if (prefix && state) candidates.push({ ref: `${sourceId}\t${key}`, identityKey, matchKey: state.slice(prefix.length), createdAt, seq });
      }
      if (rows.length < PAGE_ROWS) break;
      after = rows.at(-1)![0];
      await yieldToEventLoop();
    }
    // Map keys sort as text ("7/10" before "7/9"): the matcher wants stored order.
    return candidates.sort((left, right) => left.seq - right.seq).map(({ seq: _seq, ...candidate }) => candidate);
  }

  async saveTranscriptMatches(
    conversationId: ConversationId, matches: { refs: readonly string[]; restart: boolean; finished: boolean; bootstrapState: BootstrapState },
  ): Promise<void> {
    await this.db.write(() => {
      this.db.run("UPDATE conversations SET bootstrap_state = ? WHERE conversation_id = ?", JSON.stringify(matches.bootstrapState), conversationId);
      const imported = this.pendingConversation(conversationId);
      if (!imported) return;
      const { sourceId, peerKey } = imported;
      if (matches.restart) {
        this.db.run(
          `UPDATE import_map SET state = ? || substr(state, ?) WHERE source_id = ? AND entity = 'message' AND source_key > ? AND source_key < ?
             AND state LIKE ?`,
          PENDING, MATCHED.length + 1, sourceId, `${peerKey}/`, `${peerKey}0`, `${MATCHED}%`,
        );
      }
      for (const ref of matches.refs) {
        const [source, key] = ref.split("\t");
        if (Number(source) !== sourceId || key === undefined) continue; // a ref from another reading of another import
        this.db.run(
          "UPDATE import_map SET state = ? || substr(state, ?) WHERE source_id = ? AND entity = 'message' AND source_key = ? AND state LIKE ?",
          MATCHED, PENDING.length + 1, sourceId, key, `${PENDING}%`,
        );
      }
      if (matches.finished) {
        this.db.run(
          "UPDATE import_map SET state = json_set(state, '$.transcript', 'reconciled') WHERE source_id = ? AND entity = 'conversation' AND source_key = ?",
          sourceId, peerKey,
        );
      }
    });
  }

  /**
   * The import a conversation came from, while its transcript is still to be reconciled. One short read per source
   * (its conversations' map rows); a database with no import answers from an empty table.
   */
  private pendingConversation(conversationId: ConversationId): ImportedConversation | null {
    for (const { source_id: sourceId } of this.db.all<{ source_id: number }>("SELECT source_id FROM import_sources")) {
      const row = this.db.get<{ source_key: string }>(
        `SELECT source_key FROM import_map WHERE source_id = ? AND entity = 'conversation' AND target_id = ?
           AND json_extract(state, '$.transcript') = 'pending'`,
        sourceId, conversationId,
      );
      if (row) return { sourceId, peerKey: row.source_key };
    }
    return null;
  }
}
