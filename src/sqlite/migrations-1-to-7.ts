/**
 * Schema migrations 1 to 7 (a shipped migration is never edited): the text as it shipped, moved here verbatim from
 * migrations.ts, which runs them (spec 026, R8).
 */
import { LCM_APPLICATION_ID } from "./database-file.js";
import type { Migration } from "./migration.js";

export const MIGRATIONS_1_TO_7: readonly Migration[] = [
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
];
