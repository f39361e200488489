/**
 * Schema migrations 8 to 16 (a shipped migration is never edited): the text as it shipped, moved here verbatim from
 * migrations.ts, which runs them (spec 026, R8).
 */
import type { Migration } from "./migration.js";

export const MIGRATIONS_8_TO_16: readonly Migration[] = [
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
