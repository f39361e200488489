/**
 * The PostgreSQL side of ImportedHistoryStore: which imported messages the host's transcript has matched, kept in
 * import_map beside the rows an import wrote, exactly as the SQLite store keeps them (a conversation's cursor holds
 * `"transcript": "pending"` until bootstrap read the transcript to its end once; each message's map row holds
 * `transcript <match key>`, then `matched <match key>`). The cursor is JSON read and changed here, not in SQL, since
 * other map rows' states are plain text.
 */
import type { BootstrapState, ConversationId } from "../records.js";
import type { ImportedHistoryStore, ImportedMessageToMatch } from "../store/imported-history-store.js";
import { fromPgText, type PgDatabase, type PgQueryable, toPgText } from "./pg-database.js";

/** import_map.state of an imported message the transcript has not matched yet: this, then its match key. */
export const PENDING_TRANSCRIPT = "transcript ";
const MATCHED = "matched ";
const PAGE_ROWS = 5_000;

interface ImportedConversation { sourceId: number; peerKey: string; state: Record<string, unknown> }

export class PgImportedHistoryStore implements ImportedHistoryStore {
  constructor(private readonly database: PgDatabase) {}

  async importedMessagesToMatch(conversationId: ConversationId, options: { includeMatched: boolean }): Promise<ImportedMessageToMatch[] | null> {
    const imported = await pendingConversation(this.database, conversationId);
    if (!imported) return null;
    const { sourceId, peerKey } = imported;
    const candidates: (ImportedMessageToMatch & { seq: number })[] = [];
    for (let after = `${peerKey}/`; ;) {
      const rows = await this.database.rows<{ key: string; state: string | null; identity_key: string; created_at: number; seq: number }>(
        `SELECT i.source_key AS key, i.state, m.identity_key, m.created_at, m.seq
         FROM import_map i JOIN messages m ON m.message_id = i.target_id
         WHERE i.source_id = $1 AND i.entity = 'message' AND i.source_key > $2 AND i.source_key < $3 ORDER BY i.source_key LIMIT $4`,
        [sourceId, after, `${peerKey}0`, PAGE_ROWS],
      );
      for (const row of rows) {
        const state = row.state === null ? null : fromPgText(row.state);
        const prefix = state?.startsWith(PENDING_TRANSCRIPT) ? PENDING_TRANSCRIPT : options.includeMatched && state?.startsWith(MATCHED) ? MATCHED : null;
        if (prefix && state) {
          candidates.push({ ref: `${sourceId}\t${row.key}`, identityKey: fromPgText(row.identity_key), matchKey: state.slice(prefix.length), createdAt: row.created_at, seq: row.seq });
        }
      }
      if (rows.length < PAGE_ROWS) break;
      after = rows.at(-1)!.key;
    }
    // Map keys sort as text ("7/10" before "7/9"): the matcher wants stored order.
    return candidates.sort((left, right) => left.seq - right.seq).map(({ seq: _seq, ...candidate }) => candidate);
  }

  async saveTranscriptMatches(
    conversationId: ConversationId, matches: { refs: readonly string[]; restart: boolean; finished: boolean; bootstrapState: BootstrapState },
  ): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx.run("UPDATE conversations SET bootstrap_state = $1 WHERE conversation_id = $2", [JSON.stringify(matches.bootstrapState), conversationId]);
      const imported = await pendingConversation(tx, conversationId, true);
      if (!imported) return;
      const { sourceId, peerKey } = imported;
      const swap = (from: string) => `state = $1 || substr(state, ${from.length + 1})`;
      if (matches.restart) {
        await tx.run(
          `UPDATE import_map SET ${swap(MATCHED)} WHERE source_id = $2 AND entity = 'message' AND source_key > $3 AND source_key < $4 AND state LIKE $5`,
          [PENDING_TRANSCRIPT, sourceId, `${peerKey}/`, `${peerKey}0`, `${MATCHED}%`],
        );
      }
      const keys = matches.refs.flatMap((ref) => {
        const [source, key] = ref.split("\t");
        return Number(source) === sourceId && key !== undefined ? [key] : []; // a ref from another reading of another import
      });
      if (keys.length > 0) {
        await tx.run(
          `UPDATE import_map SET ${swap(PENDING_TRANSCRIPT)} WHERE source_id = $2 AND entity = 'message' AND source_key = ANY($3) AND state LIKE $4`,
          [MATCHED, sourceId, keys, `${PENDING_TRANSCRIPT}%`],
        );
      }
      if (matches.finished) {
        await tx.run(
          "UPDATE import_map SET state = $1 WHERE source_id = $2 AND entity = 'conversation' AND source_key = $3",
          [toPgText(JSON.stringify({ ...imported.state, transcript: "reconciled" })), sourceId, peerKey],
        );
      }
    });
  }
}

/**
 * The import a conversation came from, while its transcript is still to be reconciled; with `lock`, its map row
 * locked for the transaction. A database with no import answers from an empty table.
 */
async function pendingConversation(on: PgQueryable, conversationId: ConversationId, lock = false): Promise<ImportedConversation | null> {
  const rows = await on.rows<{ source_id: number; key: string; state: string | null }>(
    `SELECT source_id, source_key AS key, state FROM import_map WHERE entity = 'conversation' AND target_id = $1 ORDER BY source_id${lock ? " FOR UPDATE" : ""}`,
    [conversationId],
  );
  for (const row of rows) {
    const state = row.state === null ? null : JSON.parse(fromPgText(row.state)) as Record<string, unknown>;
    if (state?.transcript === "pending") return { sourceId: row.source_id, peerKey: row.key, state };
  }
  return null;
}
