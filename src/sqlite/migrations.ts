/**
 * Versioned schema migrations, tracked with PRAGMA user_version. Each runs in its own transaction; a shipped
 * migration is never edited (add a new one). When the database is up to date, `migrate` reads one pragma and
 * returns. The data model is described in docs/architecture.md.
 */
import type { Database } from "./database.js";
import { hasStoredHours } from "./stored-hours.js";
import { LCM_APPLICATION_ID } from "./database-file.js";
import { databaseUnavailableError } from "./database-problem.js";

export interface Migration {
  version: number;
  name: string;
  up: string;
  /**
   * Rebuilds a table other tables reference (copy, drop, rename, keeping every row id): foreign-key enforcement is
   * switched off around the migration's transaction (SQLite ignores that pragma inside one), or the DROP would fail.
   */
  rebuildsReferencedTable?: boolean;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    up: `
      CREATE TABLE conversations (
        conversation_id INTEGER PRIMARY KEY,
        agent_id        TEXT NOT NULL,
        session_id      TEXT NOT NULL UNIQUE,
        session_key     TEXT,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL,
        last_ingest_at  INTEGER,
        next_seq        INTEGER NOT NULL DEFAULT 1,
        next_ordinal    INTEGER NOT NULL DEFAULT 1,
        message_count   INTEGER NOT NULL DEFAULT 0,
        message_tokens  INTEGER NOT NULL DEFAULT 0,
        context_tokens  INTEGER NOT NULL DEFAULT 0,
        context_raw_tokens INTEGER NOT NULL DEFAULT 0,
        context_items   INTEGER NOT NULL DEFAULT 0,
        last_token_budget INTEGER,
        bootstrap_state TEXT,
        last_compaction TEXT
      );
      CREATE INDEX conversations_agent_session_key ON conversations (agent_id, session_key);

      CREATE TABLE messages (
        message_id      INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id),
        seq             INTEGER NOT NULL,
        role            TEXT NOT NULL,
        content         TEXT NOT NULL,
        token_count     INTEGER NOT NULL,
        created_at      INTEGER NOT NULL,
        identity_key    TEXT NOT NULL,
        flags           INTEGER NOT NULL DEFAULT 0,
        meta            TEXT NOT NULL DEFAULT '{}',
        UNIQUE (conversation_id, identity_key),
        UNIQUE (conversation_id, seq)
      );

      CREATE TABLE message_parts (
        message_id INTEGER NOT NULL REFERENCES messages (message_id),
        ordinal    INTEGER NOT NULL,
        kind       TEXT NOT NULL,
        text_start INTEGER,
        text_end   INTEGER,
        data       TEXT,
        meta       TEXT,
        PRIMARY KEY (message_id, ordinal)
      ) WITHOUT ROWID;

      CREATE TABLE committed_turns (
        conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id),
        advancement_key TEXT NOT NULL,
        committed_at    INTEGER NOT NULL,
        message_count   INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, advancement_key)
      ) WITHOUT ROWID;

      CREATE TABLE summaries (
        id                 INTEGER PRIMARY KEY,
        summary_id         TEXT NOT NULL UNIQUE,
        conversation_id    INTEGER NOT NULL REFERENCES conversations (conversation_id),
        kind               TEXT NOT NULL CHECK (kind IN ('leaf', 'condensed')),
        depth              INTEGER NOT NULL,
        content            TEXT NOT NULL,
        token_count        INTEGER NOT NULL,
        source_token_count INTEGER NOT NULL,
        earliest_at        INTEGER NOT NULL,
        latest_at          INTEGER NOT NULL,
        descendant_count   INTEGER NOT NULL,
        source_message_count INTEGER NOT NULL,
        seq_start          INTEGER NOT NULL,
        seq_end            INTEGER NOT NULL,
        file_ids           TEXT NOT NULL DEFAULT '[]',
        level              TEXT NOT NULL CHECK (level IN ('normal', 'aggressive', 'fallback')),
        created_at         INTEGER NOT NULL
      );
      CREATE INDEX summaries_conversation_seq ON summaries (conversation_id, seq_start);

      CREATE TABLE summary_messages (
        summary_id INTEGER NOT NULL REFERENCES summaries (id),
        message_id INTEGER NOT NULL REFERENCES messages (message_id),
        ordinal    INTEGER NOT NULL,
        PRIMARY KEY (summary_id, message_id)
      ) WITHOUT ROWID;

      CREATE TABLE summary_parents (
        summary_id        INTEGER NOT NULL REFERENCES summaries (id),
        parent_summary_id INTEGER NOT NULL REFERENCES summaries (id),
        ordinal           INTEGER NOT NULL,
        PRIMARY KEY (summary_id, parent_summary_id)
      ) WITHOUT ROWID;
      CREATE INDEX summary_parents_parent ON summary_parents (parent_summary_id);

      CREATE TABLE context_items (
        conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id),
        ordinal         INTEGER NOT NULL,
        message_id      INTEGER REFERENCES messages (message_id),
        summary_id      INTEGER REFERENCES summaries (id),
        token_count     INTEGER NOT NULL,
        flags           INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (conversation_id, ordinal),
        CHECK ((message_id IS NULL) <> (summary_id IS NULL))
      ) WITHOUT ROWID;

      CREATE TABLE large_files (
        file_id             TEXT PRIMARY KEY,
        conversation_id     INTEGER NOT NULL REFERENCES conversations (conversation_id),
        content_hash        TEXT NOT NULL,
        file_name           TEXT,
        mime_type           TEXT,
        byte_size           INTEGER NOT NULL,
        token_count         INTEGER NOT NULL,
        storage_path        TEXT NOT NULL,
        exploration_summary TEXT NOT NULL,
        explorer            TEXT NOT NULL,
        origin              TEXT NOT NULL,
        tool_name           TEXT,
        created_at          INTEGER NOT NULL,
        UNIQUE (conversation_id, content_hash)
      );

      CREATE TABLE expansion_grants (
        grant_id          TEXT PRIMARY KEY,
        agent_id          TEXT NOT NULL,
        child_session_key TEXT,
        conversation_ids  TEXT NOT NULL,
        token_cap         INTEGER NOT NULL,
        tokens_used       INTEGER NOT NULL DEFAULT 0,
        summaries_expanded INTEGER NOT NULL DEFAULT 0,
        created_at        INTEGER NOT NULL,
        expires_at        INTEGER NOT NULL,
        revoked_at        INTEGER,
        revoke_reason     TEXT
      );
      CREATE INDEX expansion_grants_child ON expansion_grants (child_session_key);

      CREATE VIRTUAL TABLE messages_fts USING fts5 (
        content, content = 'messages', content_rowid = 'message_id', tokenize = 'unicode61 remove_diacritics 2'
      );
      -- No insert trigger: SqliteStore writes messages_fts beside each message. An FTS5 write inside a trigger
      -- runs in a statement savepoint, and FTS5 flushes its pending terms to a new segment at every savepoint:
      -- one segment per message, then merges (3.5x the CPU of a direct insert; docs/benchmarks.md).
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.message_id, old.content);
      END;

      CREATE VIRTUAL TABLE summaries_fts USING fts5 (
        content, content = 'summaries', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER summaries_fts_insert AFTER INSERT ON summaries BEGIN
        INSERT INTO summaries_fts (rowid, content) VALUES (new.id, new.content);
      END;
      CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries BEGIN
        INSERT INTO summaries_fts (summaries_fts, rowid, content) VALUES ('delete', old.id, old.content);
      END;
    `,
  },
  {
    version: 2,
    name: "message full-text index written in batches",
    // (Version 1's note on messages_fts predates this: the store no longer writes it.)
    // Messages are no longer indexed inside the write that stores them: SqliteSearchIndex indexes them in batches
    // of hundreds (one FTS5 segment per batch instead of one per turn) and records here the highest message_id
    // indexed. Messages are never deleted and ids only grow, so "indexed" is exactly "message_id <= through".
    // FTS5's automatic merging is switched off: it ran inside whichever commit crossed a work unit (36-48 ms at
    // 1M messages); segments are merged in steps on the connection's background worker instead (wal-checkpointer.ts).
    up: `
      CREATE TABLE search_index_state (
        name    TEXT PRIMARY KEY,
        through INTEGER NOT NULL
      ) WITHOUT ROWID;
      INSERT INTO search_index_state (name, through) VALUES ('messages_fts', (SELECT coalesce(max(message_id), 0) FROM messages));
      INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
      -- A message still waiting for its batch is not in the index, and FTS5 must not be told to delete it.
      DROP TRIGGER messages_fts_delete;
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
      WHEN old.message_id <= (SELECT through FROM search_index_state WHERE name = 'messages_fts') BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.message_id, old.content);
      END;
    `,
  },
  {
    version: 3,
    name: "dictionary of the message index's terms",
    // Every distinct term of messages_fts that has a letter in it, with its characters reversed: a regex whose
    // literal may end a longer word ("INC-" in "XINC-42") finds the index terms that end with it by a range scan
    // on `reversed`, and the index then lists the only messages that can match (specs/010-term-dictionary.md).
    // The dictionary covers the indexed messages with floor < message_id <= top (the rows 'term_dictionary' and
    // 'term_dictionary_top'): here none, both at what is indexed so far; SqliteSearchIndex extends it upwards as
    // messages are indexed and backfills it downwards to 0, and only then do searches rely on it.
    up: `
      CREATE TABLE search_terms (
        term     TEXT PRIMARY KEY,
        reversed TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX search_terms_reversed ON search_terms (reversed);
      INSERT INTO search_index_state (name, through)
        SELECT 'term_dictionary', through FROM search_index_state WHERE name = 'messages_fts';
      INSERT INTO search_index_state (name, through)
        SELECT 'term_dictionary_top', through FROM search_index_state WHERE name = 'messages_fts';
    `,
  },
  {
    version: 4,
    name: "window and reserve beside the recorded budget",
    // The budget of a turn's first assemble is recorded with the model window and the reply reserve of that turn,
    // so that compaction can take the same overhead (system prompt, prompt) from a window stated later, after the
    // model was switched (specs/011-budget-safe-context.md).
    up: `
      ALTER TABLE conversations ADD COLUMN last_window_tokens INTEGER;
      ALTER TABLE conversations ADD COLUMN last_reserve_tokens INTEGER;
    `,
  },
  {
    version: 5,
    name: "conversations keyed by agent and session; the entry that opened each committed turn",
    // A conversation belongs to an agent: the key that finds it is (agent_id, session_id), never the session id
    // alone (a call for one agent carrying another agent's session id must not reach that agent's history). The
    // column-level UNIQUE on session_id cannot be dropped in place, so the table is rebuilt with its rows and ids.
    rebuildsReferencedTable: true,
    up: `
      CREATE TABLE conversations_v5 (
        conversation_id INTEGER PRIMARY KEY,
        agent_id        TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        session_key     TEXT,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL,
        last_ingest_at  INTEGER,
        next_seq        INTEGER NOT NULL DEFAULT 1,
        next_ordinal    INTEGER NOT NULL DEFAULT 1,
        message_count   INTEGER NOT NULL DEFAULT 0,
        message_tokens  INTEGER NOT NULL DEFAULT 0,
        context_tokens  INTEGER NOT NULL DEFAULT 0,
        context_raw_tokens INTEGER NOT NULL DEFAULT 0,
        context_items   INTEGER NOT NULL DEFAULT 0,
        last_token_budget INTEGER,
        bootstrap_state TEXT,
        last_compaction TEXT,
        last_window_tokens INTEGER,
        last_reserve_tokens INTEGER,
        UNIQUE (agent_id, session_id)
      );
      INSERT INTO conversations_v5 (
        conversation_id, agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq,
        next_ordinal, message_count, message_tokens, context_tokens, context_raw_tokens, context_items,
        last_token_budget, bootstrap_state, last_compaction, last_window_tokens, last_reserve_tokens
      ) SELECT
        conversation_id, agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq,
        next_ordinal, message_count, message_tokens, context_tokens, context_raw_tokens, context_items,
        -- A host budget older versions stored as it came (1e18) made the whole row unreadable: dropped here.
        CASE WHEN last_token_budget BETWEEN 1 AND 1000000000000 THEN last_token_budget END,
        bootstrap_state, last_compaction,
        CASE WHEN last_window_tokens BETWEEN 1 AND 1000000000000 THEN last_window_tokens END,
        CASE WHEN last_reserve_tokens BETWEEN 1 AND 1000000000000 THEN last_reserve_tokens END
      FROM conversations;
      DROP TABLE conversations;
      ALTER TABLE conversations_v5 RENAME TO conversations;
      CREATE INDEX conversations_agent_session_key ON conversations (agent_id, session_key);
      -- The host's transcript entry that opened each committed turn: a turn with a new advancement key but the
      -- same opening entry is a replay of that turn; one with another entry brings new messages.
      ALTER TABLE committed_turns ADD COLUMN admission_entry_id TEXT;
      CREATE INDEX committed_turns_admission ON committed_turns (conversation_id, admission_entry_id);
      -- A turn too large for one transaction is written in chunks: how many of its messages are stored so far
      -- (NULL once all are; a retry after a crash resumes from there).
      ALTER TABLE committed_turns ADD COLUMN stored_messages INTEGER;
    `,
  },
  {
    version: 6,
    name: "LCM's application id in the file header",
    // Marks the file as LCM's (PRAGMA application_id, "lcm1"), so that opening can tell it from another plugin's
    // database with the same table names (lossless-claw used the same default path) without guessing from tables.
    // New files get it here too, as every migration runs on them. Older files stay recognisable by their schema.
    up: `PRAGMA application_id = ${LCM_APPLICATION_ID};`,
  },
  {
    version: 7,
    name: "session lifecycle: new sessions, archived and ended conversations",
    // OpenClaw's /new and /reset start a new session under the same session key and the same session id
    // (specs/016-session-lifecycle.md). /new keeps the conversation and records the reset on it; /reset archives the
    // conversation (archived_at) and a new live conversation continues the session, so at most one conversation per
    // (agent, session) is live: the table-level UNIQUE becomes a partial unique index, which needs a rebuild that
    // keeps every row and id. ended_at marks a conversation whose host session was deleted or is gone.
    rebuildsReferencedTable: true,
    up: `
      CREATE TABLE conversations_v7 (
        conversation_id INTEGER PRIMARY KEY,
        agent_id        TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        session_key     TEXT,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL,
        last_ingest_at  INTEGER,
        next_seq        INTEGER NOT NULL DEFAULT 1,
        next_ordinal    INTEGER NOT NULL DEFAULT 1,
        message_count   INTEGER NOT NULL DEFAULT 0,
        message_tokens  INTEGER NOT NULL DEFAULT 0,
        context_tokens  INTEGER NOT NULL DEFAULT 0,
        context_raw_tokens INTEGER NOT NULL DEFAULT 0,
        context_items   INTEGER NOT NULL DEFAULT 0,
        last_token_budget INTEGER,
        bootstrap_state TEXT,
        last_compaction TEXT,
        last_window_tokens INTEGER,
        last_reserve_tokens INTEGER,
        session_started_at INTEGER,
        last_reset      TEXT,
        previous_conversation_id INTEGER,
        archived_at     INTEGER,
        archive_reason  TEXT,
        ended_at        INTEGER,
        end_reason      TEXT
      );
      INSERT INTO conversations_v7 (
        conversation_id, agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq,
        next_ordinal, message_count, message_tokens, context_tokens, context_raw_tokens, context_items,
        last_token_budget, bootstrap_state, last_compaction, last_window_tokens, last_reserve_tokens
      ) SELECT
        conversation_id, agent_id, session_id, session_key, created_at, updated_at, last_ingest_at, next_seq,
        next_ordinal, message_count, message_tokens, context_tokens, context_raw_tokens, context_items,
        last_token_budget, bootstrap_state, last_compaction, last_window_tokens, last_reserve_tokens
      FROM conversations;
      DROP TABLE conversations;
      ALTER TABLE conversations_v7 RENAME TO conversations;
      CREATE UNIQUE INDEX conversations_live_session ON conversations (agent_id, session_id) WHERE archived_at IS NULL;
      CREATE INDEX conversations_agent_session_key ON conversations (agent_id, session_key);
    `,
  },
  {
    version: 8,
    name: "full-text indexes of the words recall looks for",
    // Messages and summaries are indexed as search reads them (specs/013-recall.md): tool-call arguments
    // decoded, words split and folded by src/search/text-analysis.ts (emoji never glued to a word), plus each
    // word's fragments (camelCase and letter/digit parts, pairs of characters of unspaced scripts) in a second
    // column. The analysis runs in JavaScript, so the tables are contentless and tokenize only on the spaces it
    // leaves ('ascii'); 'contentless_delete' keeps deletes possible. Both start empty and are filled in batches
    // (SqliteSearchIndex, oldest first; until then searches read the rows not yet indexed directly). The term
    // dictionary is rebuilt with them, in the same transactions, and now also holds each word's Porter stem.
    // Dropping the old message index is one pass over its pages (145 ms at a million messages).
    up: `
      DROP TRIGGER messages_fts_delete;
      DROP TABLE messages_fts;
      CREATE VIRTUAL TABLE messages_fts USING fts5 (
        words, derived, content = '', contentless_delete = 1, tokenize = 'ascii'
      );
      INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
      WHEN old.message_id <= (SELECT through FROM search_index_state WHERE name = 'messages_fts') BEGIN
        DELETE FROM messages_fts WHERE rowid = old.message_id;
      END;
      DROP TRIGGER summaries_fts_insert;
      DROP TRIGGER summaries_fts_delete;
      DROP TABLE summaries_fts;
      CREATE VIRTUAL TABLE summaries_fts USING fts5 (
        words, derived, content = '', contentless_delete = 1, tokenize = 'ascii'
      );
      CREATE TRIGGER summaries_fts_delete AFTER DELETE ON summaries
      WHEN old.id <= (SELECT through FROM search_index_state WHERE name = 'summaries_fts') BEGIN
        DELETE FROM summaries_fts WHERE rowid = old.id;
      END;
      DROP TABLE search_terms;
      CREATE TABLE search_terms (
        term     TEXT PRIMARY KEY,
        reversed TEXT NOT NULL,
        stem     TEXT
      ) WITHOUT ROWID;
      CREATE INDEX search_terms_reversed ON search_terms (reversed);
      CREATE INDEX search_terms_stem ON search_terms (stem) WHERE stem IS NOT NULL;
      DELETE FROM search_index_state WHERE name IN ('term_dictionary', 'term_dictionary_top');
      UPDATE search_index_state SET through = 0 WHERE name = 'messages_fts';
      INSERT INTO search_index_state (name, through) VALUES ('summaries_fts', 0);
    `,
  },
  {
    version: 9,
    name: "imports from other stores: each source and what of it is stored where",
    // `lcm import` (specs/018-import-export-retention.md) remembers each source it read (kind and a fingerprint of
    // the source's oldest rows, so a copy of the same file at another path is the same source) and, per source row,
    // the row it became here. Written in the transactions that store the rows, so an interrupted import resumes
    // where it stopped and a second run adds nothing. `state` holds a conversation's import cursor (JSON), or why a
    // row could not be mapped.
    up: `
      CREATE TABLE import_sources (
        source_id    INTEGER PRIMARY KEY,
        kind         TEXT NOT NULL,
        fingerprint  TEXT NOT NULL,
        path         TEXT NOT NULL,
        schema_line  TEXT NOT NULL,
        started_at   INTEGER NOT NULL,
        completed_at INTEGER,
        UNIQUE (kind, fingerprint)
      );
      CREATE TABLE import_map (
        source_id  INTEGER NOT NULL REFERENCES import_sources (source_id),
        entity     TEXT NOT NULL,
        source_key TEXT NOT NULL,
        target_id  INTEGER,
        target_key TEXT,
        state      TEXT,
        PRIMARY KEY (source_id, entity, source_key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 10,
    name: "retention: archives and what of the history went into them",
    // Retention (specs/018-import-export-retention.md, off by default) writes what leaves the database to gzip
    // JSONL archives first. `retention_archives` lists each archive: a whole conversation (its rows are then deleted)
    // or the raw messages of a live conversation that summaries already cover (their rows stay as stubs: identity,
    // seq, role, time and token count, so deduplication, summary links and counters hold; `archive_id` names the
    // archive holding the text). The conversation columns are copied because the conversation row may be gone.
    // `retention_archived_ids` maps each summary and file id of a conversation archived whole to its archive, so
    // recall can say where an id went. `state` is 'deleting' until every row of an archived conversation is gone.
    up: `
      CREATE TABLE retention_archives (
        archive_id      INTEGER PRIMARY KEY,
        kind            TEXT NOT NULL CHECK (kind IN ('conversation', 'messages')),
        path            TEXT NOT NULL,
        created_at      INTEGER NOT NULL,
        conversation_id INTEGER NOT NULL,
        agent_id        TEXT NOT NULL,
        session_id      TEXT NOT NULL,
        session_key     TEXT,
        reason          TEXT NOT NULL,
        message_count   INTEGER NOT NULL,
        seq_start       INTEGER,
        seq_end         INTEGER,
        byte_size       INTEGER NOT NULL,
        state           TEXT NOT NULL CHECK (state IN ('deleting', 'done'))
      );
      CREATE INDEX retention_archives_conversation ON retention_archives (conversation_id);
      CREATE TABLE retention_archived_ids (
        id         TEXT PRIMARY KEY,
        archive_id INTEGER NOT NULL REFERENCES retention_archives (archive_id)
      ) WITHOUT ROWID;
      ALTER TABLE messages ADD COLUMN archive_id INTEGER REFERENCES retention_archives (archive_id);
      -- Deleting a message makes SQLite look for rows that reference it (foreign keys); without these indexes each
      -- lookup scanned both tables whole (118 ms per 200 messages at 10k messages, measured): retention deletes
      -- the messages of a conversation archived whole. They also find a message's summary and context item directly.
      CREATE INDEX summary_messages_message ON summary_messages (message_id);
      CREATE INDEX context_items_message ON context_items (message_id) WHERE message_id IS NOT NULL;
    `,
  },
  {
    version: 11,
    name: "content stored aside is searched like messages: chunks of stored files in a full-text index",
    // specs/019-one-search.md. Every stored file gets a row in `file_index` (a trigger on large_files, whatever
    // writes the file: a turn, an import, a restore): the message believed to hold its reference (the newest of its
    // conversation when the file row is written, which is the message's own transaction for a turn; checked when
    // read), how far its content is indexed, and whether it cannot be (missing, binary). The indexer reads the file
    // from disk in pieces and writes `file_chunks` (a few KB each, with byte range and first line) and `files_fts`
    // (the same analysed words as messages_fts) in one transaction per piece. Deleting a file row deletes its chunks.
    up: `
      CREATE TABLE file_index (
        file_key        INTEGER PRIMARY KEY,
        file_id         TEXT NOT NULL UNIQUE,
        conversation_id INTEGER NOT NULL,
        message_id      INTEGER,
        created_at      INTEGER NOT NULL,
        indexed_bytes   INTEGER NOT NULL DEFAULT 0,
        indexed_lines   INTEGER NOT NULL DEFAULT 1,
        state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'indexed', 'unavailable', 'binary')),
        reason          TEXT
      );
      CREATE INDEX file_index_pending ON file_index (file_key) WHERE state = 'pending';
      CREATE INDEX file_index_conversation ON file_index (conversation_id, state);
      CREATE TABLE file_chunks (
        chunk_id   INTEGER PRIMARY KEY,
        file_key   INTEGER NOT NULL REFERENCES file_index (file_key),
        byte_start INTEGER NOT NULL,
        byte_end   INTEGER NOT NULL,
        line_start INTEGER NOT NULL
      );
      CREATE INDEX file_chunks_file ON file_chunks (file_key, byte_start);
      CREATE VIRTUAL TABLE files_fts USING fts5 (
        words, derived, content = '', contentless_delete = 1, tokenize = 'ascii'
      );
      INSERT INTO files_fts (files_fts, rank) VALUES ('automerge', 0);
      CREATE TRIGGER large_files_index_insert AFTER INSERT ON large_files BEGIN
        INSERT OR IGNORE INTO file_index (file_id, conversation_id, message_id, created_at) VALUES (
          new.file_id, new.conversation_id,
          (SELECT message_id FROM messages WHERE conversation_id = new.conversation_id ORDER BY seq DESC LIMIT 1),
          coalesce((SELECT created_at FROM messages WHERE conversation_id = new.conversation_id ORDER BY seq DESC LIMIT 1), new.created_at)
        );
      END;
      CREATE TRIGGER large_files_index_delete AFTER DELETE ON large_files BEGIN
        DELETE FROM files_fts WHERE rowid IN (
          SELECT c.chunk_id FROM file_index f JOIN file_chunks c ON c.file_key = f.file_key WHERE f.file_id = old.file_id
        );
        DELETE FROM file_chunks WHERE file_key = (SELECT file_key FROM file_index WHERE file_id = old.file_id);
        DELETE FROM file_index WHERE file_id = old.file_id;
      END;
      INSERT INTO file_index (file_id, conversation_id, created_at)
        SELECT file_id, conversation_id, created_at FROM large_files ORDER BY created_at, file_id;
    `,
  },
  {
    version: 12,
    name: "restored conversations: retention leaves them alone for a while",
    // `lcm import jsonl` restores an export or a retention archive exactly, old times included; `restored_at` is when
    // (this database's fact, not exported). Retention counts a restored conversation as active from then
    // (retention/retention-policy.ts restoreHoldMs), so the next run does not archive again what was just restored.
    up: `ALTER TABLE conversations ADD COLUMN restored_at INTEGER;`,
  },
  {
    version: 13,
    name: "stored-file paths relative to the database's folder",
    // A stored file's path was recorded absolute, so a backup opened elsewhere, or the database moved with its files
    // folder, found every file missing. Paths under the database's folder (the default files directory is
    // `<name>-files/` beside it) are now recorded relative to that folder (sqlite/stored-file-path.ts); this makes the
    // existing rows so. The folder is the one SQLite opened the file in (`pragma_database_list`): its path up to the
    // last "/". Paths elsewhere (a files directory configured outside the folder) stay absolute and keep working.
    up: `
      UPDATE large_files SET storage_path = substr(storage_path, length(folder.path) + 1)
      FROM (SELECT rtrim(file, replace(file, '/', '')) AS path FROM pragma_database_list WHERE name = 'main' AND file LIKE '/%') AS folder
      WHERE substr(large_files.storage_path, 1, length(folder.path)) = folder.path
        AND length(large_files.storage_path) > length(folder.path);
    `,
  },
  {
    version: 14,
    name: "when messages were stored: the first message id of each hour",
    // Growth ("N messages in the last 7 days" of /lcm status) counts rows by when this database stored them, not by
    // the messages' own times: an import brings history whose times are months old. Message ids only grow, so the
    // first id stored in each hour (unix hours) bounds every later one; growth since a time is the newest id less the
    // first id of the first hour at or after it. Database.write records the row (sqlite/stored-hours.ts) once per write
    // transaction that added messages, whichever path wrote them: a trigger per message row cost 10-15 µs a message
    // on the loaded development machine (35-50% of a bare insert). Rows stored before this version have no mark:
    // growth reads their own times, as before.
    up: `
      CREATE TABLE message_stored_hours (
        hour             INTEGER PRIMARY KEY,
        first_message_id INTEGER NOT NULL
      );
    `,
  },
  {
    version: 15,
    name: "what the host left the last turn's context",
    // The first assemble of the last turn (spec 023): the budget OpenClaw gave, the tools it sends beside the history,
    // the message by its measure, LCM's own budget and what assemble returned (JSON, AssemblyRecord). /lcm status and
    // `lcm context` read it to say what the host's own prompt and tools leave, from another process than the turn's.
    up: `
      ALTER TABLE conversations ADD COLUMN last_assembly TEXT;
    `,
  },
  {
    version: 16,
    name: "summary repairs: an undo record per repair, and who wrote a summary's text",
    // Repairs (specs/027-inspector-and-repair.md): re-summarizing a summary, rewriting it by hand, dissolving a
    // condensed summary back into its parents in the context. Each is one transaction that first writes its row
    // here: the exact values it replaced (`before`) and wrote (`after`), as JSON, so `lcm repair undo` restores the
    // rows exactly, and refuses when they changed since. `written_by` says who wrote a summary's current text
    // ('model:<summarizer>', 'deterministic', 'hand'); NULL for summaries written before this schema or by compaction.
    up: `
      ALTER TABLE summaries ADD COLUMN written_by TEXT;
      CREATE TABLE summary_repairs (
        repair_id       INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations (conversation_id),
        summary_id      TEXT NOT NULL,
        kind            TEXT NOT NULL CHECK (kind IN ('resummarize', 'rewrite', 'dissolve')),
        created_at      INTEGER NOT NULL,
        detail          TEXT NOT NULL,
        before          TEXT NOT NULL,
        after           TEXT NOT NULL,
        undone_at       INTEGER
      );
      CREATE INDEX summary_repairs_conversation ON summary_repairs (conversation_id, repair_id);
      CREATE INDEX summary_repairs_summary ON summary_repairs (summary_id);
      -- maintain looks for fallback summaries to redo after every turn: a partial index keeps that one probe.
      CREATE INDEX summaries_fallback ON summaries (conversation_id, id) WHERE level = 'fallback';
    `,
  },
];

/**
 * Brings the schema up to date. Cheap when already current: one pragma read (and one schema lookup, for whether
 * writes mark when they stored messages). Migrations run once per process when the first engine opens the file;
 * openDatabase retries the whole open while another process holds the lock.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const current = currentVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw databaseUnavailableError(db.path, { kind: "newer-schema", schemaVersion: current, supportedVersion: latest });
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    if (migration.rebuildsReferencedTable) db.raw.exec("PRAGMA foreign_keys = OFF");
    try {
      db.writeNow(() => {
        // Re-check inside the write lock: another process may have migrated meanwhile.
        if (currentVersion(db) >= migration.version) return;
        db.raw.exec(migration.up);
        db.raw.exec(`PRAGMA user_version = ${migration.version}`);
      });
    } finally {
      if (migration.rebuildsReferencedTable) db.raw.exec("PRAGMA foreign_keys = ON");
    }
  }
  db.marksStoredHours = hasStoredHours(db.raw);
  return latest;
}

function currentVersion(db: Database): number {
  return Number((db.raw.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
}
