/**
 * `lcm import lossless-claw` on databases the peer's own code wrote, one per version (0.1.4, 0.15.3, 1.0.0-beta.4;
 * test/fixtures/lossless-claw/README.md): everything comes over and `lcm doctor` finds nothing; the tool outputs the
 * peer stored aside arrive as LCM's own file references the model, the search and lcm_describe use; the tool result
 * the peer left at the head of a fresh tail goes under the summary that took its call; an import interrupted after
 * any of its transactions ends, once resumed, exactly as an uninterrupted one; a re-run after the peer pruned its
 * oldest conversation adds nothing.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import type { ImportLosslessClawOutput } from "../../../src/cli/commands/import-lossless-claw-command.js";
import { DescribeOutputSchema, DoctorOutputSchema, GrepOutputSchema, ImportLosslessClawOutputSchema } from "../../../src/cli/output-schemas.js";
import { openDatabase } from "../../../src/sqlite/connection-registry.js";
import { resolveRecordedPath } from "../../../src/sqlite/stored-file-path.js";
import { SqlitePeerImportStore } from "../../../src/sqlite/sqlite-peer-import-store.js";
import { importLosslessClaw } from "../../../src/transfer/lossless-claw/lossless-claw-import.js";
import { LargeFileStorage } from "../../../src/large-files/large-file-storage.js";
import { DefaultTokenEstimator } from "../../../src/tokens/default-token-estimator.js";
import { runJson } from "../../cli/cli-harness.js";
import { SteppingClock } from "../../fakes/clocks.js";
import { createTestEngine } from "../../helpers/engine.js";
import { tempDir } from "../../helpers/temp-dir.js";
import { PeerWriter } from "./peer-fixtures.js";
import { keepsSessionKeys, PEER_SESSIONS, PEER_VERSIONS, type PeerVersion, unpackPeer } from "./real-peer.js";

function importCli(source: string, db: string): Promise<ImportLosslessClawOutput> {
  return runJson<ImportLosslessClawOutput>(["import", "lossless-claw", source, "--db", db, "--apply"], ImportLosslessClawOutputSchema);
}

/** The peer's stored-aside tool outputs: the message, the file and the tool, and the file's bytes on disk. */
function peerToolOutputs(source: string): { conversationId: number; messageId: number; fileId: string; toolName: string; bytes: Buffer }[] {
  const peer = new DatabaseSync(source, { readOnly: true });
  try {
    const rows = peer.prepare(
      `SELECT m.conversation_id, m.message_id, json_extract(p.metadata, '$.externalizedFileId') AS file_id, json_extract(p.metadata, '$.toolName') AS tool_name
       FROM message_parts p JOIN messages m USING (message_id) WHERE json_extract(p.metadata, '$.toolOutputExternalized') = 1 ORDER BY m.message_id`,
    ).all() as { conversation_id: number; message_id: number; file_id: string; tool_name: string }[];
    return rows.map((row) => {
      const name = (peer.prepare("SELECT storage_uri FROM large_files WHERE file_id = ?").get(row.file_id) as { storage_uri: string }).storage_uri.split("/").at(-1)!;
      return {
        conversationId: row.conversation_id, messageId: row.message_id, fileId: row.file_id, toolName: row.tool_name,
        bytes: readFileSync(join(dirname(source), "lcm-files", String(row.conversation_id), name)),
      };
    });
  } finally {
    peer.close();
  }
}

function query<T>(db: string, sql: string, ...params: (string | number)[]): T[] {
  const database = new DatabaseSync(db, { readOnly: true });
  try {
    return database.prepare(sql).all(...params).map((row) => ({ ...row })) as T[];
  } finally {
    database.close();
  }
}

/** Everything an import wrote, in a form two databases can be compared by (row ids left out). */
function snapshot(db: string): unknown {
  return {
    conversations: query(db, `SELECT agent_id, session_id, session_key, archived_at IS NULL AS live, archive_reason, next_seq, next_ordinal, message_count,
      message_tokens, context_tokens, context_raw_tokens, context_items FROM conversations ORDER BY conversation_id`),
    messages: query(db, "SELECT conversation_id, seq, role, content, token_count, identity_key, flags, meta FROM messages ORDER BY conversation_id, seq"),
    parts: query(db, "SELECT m.conversation_id, m.seq, p.ordinal, p.kind, p.text_start, p.text_end, p.meta FROM message_parts p JOIN messages m USING (message_id) ORDER BY 1, 2, 3"),
    summaries: query(db, `SELECT summary_id, conversation_id, kind, depth, content, seq_start, seq_end, source_message_count, descendant_count FROM summaries ORDER BY summary_id`),
    summaryMessages: query(db, "SELECT s.summary_id, m.seq, sm.ordinal FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id JOIN messages m USING (message_id) ORDER BY 1, 3"),
    summaryParents: query(db, "SELECT s.summary_id, p.summary_id AS parent, sp.ordinal FROM summary_parents sp JOIN summaries s ON s.id = sp.summary_id JOIN summaries p ON p.id = sp.parent_summary_id ORDER BY 1, 3"),
    context: query(db, `SELECT c.conversation_id, c.ordinal, m.seq, s.summary_id, c.token_count, c.flags FROM context_items c
      LEFT JOIN messages m USING (message_id) LEFT JOIN summaries s ON s.id = c.summary_id ORDER BY 1, 2`),
    files: query(db, "SELECT file_id, conversation_id, content_hash, byte_size, storage_path, origin, tool_name, explorer FROM large_files ORDER BY file_id"),
    map: query(db, "SELECT entity, source_key, target_key, state FROM import_map WHERE entity <> 'conversation' ORDER BY entity, source_key"),
  };
}

describe.each(PEER_VERSIONS)("a database lossless-claw %s wrote", (version: PeerVersion) => {
  it("comes over whole: every conversation, message, summary and file, and lcm doctor finds nothing", async () => {
    const source = unpackPeer(version);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    expect(report.conversations).toMatchObject({ total: 3, imported: 3, notImported: 0 });
    expect(report.written.messages).toBe(report.sourceCounts.messages);
    expect(report.written.largeFiles).toBe(report.sourceCounts.largeFiles);
    expect(report.written.summaries).toBe(report.sourceCounts.summaries);
    const doctor = await runJson<{ healthy: boolean; findings: unknown[] }>(["doctor", "--db", db], DoctorOutputSchema);
    expect(doctor.findings).toEqual([]);
    expect(doctor.healthy).toBe(true);
  });

  it("maps the tool result the peer left at the head of its fresh tail under the summary that took its call", async () => {
    const source = unpackPeer(version);
    const db = join(tempDir(), "lcm-context.db");
    const report = await importCli(source, db);
    // The peer's conversation 1 context: summaries, then message 26, the small tool result whose call was summarized.
    const orphan = report.unmapped.find((entry) => entry.kind.startsWith("context item: tool result whose call the peer summarized"));
    expect(orphan?.examples).toContain("1/26");
    const [placement] = query<{ in_context: number; under_leaf: number }>(db,
      `SELECT (SELECT count(*) FROM context_items WHERE message_id = m.message_id) AS in_context,
              (SELECT count(*) FROM summary_messages sm JOIN summaries s ON s.id = sm.summary_id WHERE sm.message_id = m.message_id AND s.kind = 'leaf') AS under_leaf
       FROM messages m JOIN import_map i ON i.target_id = m.message_id AND i.entity = 'message' WHERE i.source_key = '1/26'`);
    expect(placement).toEqual({ in_context: 0, under_leaf: 1 });
    // The assembled context is valid for a strict provider: every tool result follows the call it answers.
    const env = createTestEngine({ databasePath: db });
    const session = keepsSessionKeys(version) ? PEER_SESSIONS[0] : { sessionId: PEER_SESSIONS[0].sessionId };
    const assembled = await env.newEngine().assemble({ ...session, messages: [], tokenBudget: 50_000 });
    const calls = new Set<string>();
    for (const message of assembled.messages) {
      if (message.role === "assistant" && Array.isArray(message.content)) {
        for (const block of message.content as { type?: string; id?: string }[]) if (block.type === "toolCall" && block.id) calls.add(block.id);
      }
      if (message.role === "toolResult") expect(calls.has(String(message.toolCallId))).toBe(true);
    }
  });

  it("a run interrupted after any of its transactions, resumed, ends exactly as an uninterrupted run", async () => {
    const source = unpackPeer(version);
    // One transaction per store call (a long slice), so the clean run and every interrupted run cut at the same places.
    const run = async (db: string, stopAfter: number | null) => {
      const database = openDatabase(db);
      const controller = new AbortController();
      let transactions = 0;
      try {
        await importLosslessClaw({
          sourcePath: source, store: new SqlitePeerImportStore(database), files: new LargeFileStorage(join(dirname(db), "lcm-context-files")),
          tokens: new DefaultTokenEstimator(), clock: new SteppingClock(), sliceMs: 60_000, signal: controller.signal,
          onTransaction: () => {
            transactions++;
            if (transactions === stopAfter) controller.abort();
          },
        });
        return { transactions, stopped: false };
      } catch (error) {
        expect(controller.signal.aborted, String(error)).toBe(true);
        return { transactions, stopped: true };
      } finally {
        database.close();
      }
    };
    const clean = join(tempDir(), "lcm-context.db");
    const { transactions } = await run(clean, null);
    const expected = snapshot(clean);
    expect(transactions).toBeGreaterThan(15);
    let stopped = 0;
    for (let stopAfter = 1; stopAfter < transactions; stopAfter++) {
      const db = join(tempDir(), "lcm-context.db");
      if ((await run(db, stopAfter)).stopped) stopped++;
      await run(db, null);
      expect(snapshot(db), `stopped after transaction ${stopAfter}`).toEqual(expected);
    }
    expect(stopped).toBe(transactions - 1);
  }, 300_000); // two imports per transaction (about 20-30): a minute or more on a loaded machine

  it("a re-run after the peer pruned its oldest conversation adds nothing and duplicates nothing", async () => {
    const source = unpackPeer(version);
    const db = join(tempDir(), "lcm-context.db");
    const first = await importCli(source, db);
    const before = snapshot(db);
    // Conversation 1 and every row of it gone (the 1.x bookkeeping tables that point at its messages are left as they are).
    const peer = new DatabaseSync(source, { enableForeignKeyConstraints: false });
    peer.exec(`
      DELETE FROM context_items WHERE conversation_id = 1;
      DELETE FROM summary_messages WHERE summary_id IN (SELECT summary_id FROM summaries WHERE conversation_id = 1);
      DELETE FROM summary_parents WHERE summary_id IN (SELECT summary_id FROM summaries WHERE conversation_id = 1);
      DELETE FROM summaries WHERE conversation_id = 1;
      DELETE FROM message_parts WHERE message_id IN (SELECT message_id FROM messages WHERE conversation_id = 1);
      DELETE FROM messages WHERE conversation_id = 1;
      DELETE FROM large_files WHERE conversation_id = 1;
      DELETE FROM conversations WHERE conversation_id = 1;
    `);
    peer.close();
    const again = await importCli(source, db);
    // The file's fingerprint (its oldest conversation) changed with the prune; its conversations did not.
    expect(again.source.fingerprint).not.toBe(first.source.fingerprint);
    expect(again.conversations).toMatchObject({ total: 2, imported: 0, alreadyImported: 2 });
    expect(Object.values(again.written).every((count) => count === 0)).toBe(true);
    expect(query(db, "SELECT count(*) AS n FROM import_sources")).toEqual([{ n: 1 }]);
    expect(snapshot(db)).toEqual(before);
    // Searching finds each message once.
    const found = await runJson<{ matches: unknown[] }>(["grep", "beta turn 3:", "--scope", "messages", "--db", db], GrepOutputSchema);
    expect(found.matches).toHaveLength(1);
  });
});

describe.each(PEER_VERSIONS.filter((version) => version !== "0.1.4"))("tool outputs lossless-claw %s stored aside", (version) => {
  it("arrive as LCM's own file references, with the file's row and bytes, seen by the model, the search and lcm_describe", async () => {
    const source = unpackPeer(version);
    const outputs = peerToolOutputs(source);
    expect(outputs.map((output) => output.bytes.length)).toContain(14_000);
    const db = join(tempDir(), "lcm-context.db");
    await importCli(source, db);
    for (const output of outputs) {
      const [message] = query<{ content: string; file_id: string; origin: string; tool_name: string; storage_path: string; byte_size: number }>(db,
        `SELECT m.content, f.file_id, f.origin, f.tool_name, f.storage_path, f.byte_size FROM import_map i JOIN messages m ON m.message_id = i.target_id
         JOIN large_files f ON f.conversation_id = m.conversation_id AND f.file_id = ? WHERE i.entity = 'message' AND i.source_key = ?`,
        output.fileId, `${output.conversationId}/${output.messageId}`);
      expect(message, `${output.fileId} of message ${output.messageId}`).toBeDefined();
      expect(message!.content).toContain(`[LCM File: ${output.fileId} | ${output.toolName}.txt | text/plain | ${output.bytes.length.toLocaleString("en-US")} bytes]`);
      expect(message!.content).not.toContain("[LCM Tool Output:");
      expect(message).toMatchObject({ origin: "tool-result", tool_name: output.toolName, byte_size: output.bytes.length });
      expect(readFileSync(resolveRecordedPath(db, message!.storage_path)).equals(output.bytes)).toBe(true);
    }
    // The search over stored files reads the 14,000-byte output; lcm_describe pages it.
    const big = outputs.find((output) => output.bytes.length === 14_000)!;
    const line = big.bytes.toString("utf8").split("\n")[150]!.split(" (")[0]!;
    const found = await runJson<{ matches: { fileId: string }[] }>(["grep", line, "--scope", "files", "--db", db], GrepOutputSchema);
    expect(found.matches.map((match) => match.fileId)).toEqual([big.fileId]);
    const described = await runJson<{ content: unknown }>(["describe", big.fileId, "--db", db], DescribeOutputSchema);
    expect(JSON.stringify(described.content)).toContain("line 1: deploy step 1 finished");
    // The model sees the reference: conversation 2's fresh tail holds a tool output the peer stored aside.
    const env = createTestEngine({ databasePath: db });
    const assembled = await env.newEngine().assemble({ ...PEER_SESSIONS[1], messages: [], tokenBudget: 50_000 });
    const results = assembled.messages.filter((message) => message.role === "toolResult").map((message) => JSON.stringify(message.content));
    expect(results.some((text) => /\[LCM File: file_[0-9a-f]{16} \| (write|exec)\.txt \| text\/plain \| 5,000 bytes\]/.test(text))).toBe(true);
  });
});

describe("a <file> block lossless-claw 0.1.4 stored aside", () => {
  it("keeps its reference in the user message, with the file copied byte for byte", async () => {
    const source = unpackPeer("0.1.4");
    const db = join(tempDir(), "lcm-context.db");
    await importCli(source, db);
    const [file] = query<{ file_id: string; storage_path: string; byte_size: number }>(db, "SELECT file_id, storage_path, byte_size FROM large_files");
    expect(file!.byte_size).toBe(9_002);
    const [message] = query<{ content: string }>(db, "SELECT content FROM messages WHERE role = 'user' AND content LIKE ?", `%[LCM File: ${file!.file_id} | notes.md | text/markdown | 9,002 bytes]%`);
    expect(message).toBeDefined();
    const peerFile = readFileSync(join(dirname(source), "lcm-files", "1", `${file!.file_id}.md`));
    expect(readFileSync(resolveRecordedPath(db, file!.storage_path)).equals(peerFile)).toBe(true);
  });
});

describe("the hand-built peer databases (peer-fixtures.ts)", () => {
  it("have the core tables and columns of the databases the peer wrote", () => {
    const tables = ["conversations", "messages", "message_parts", "summaries", "summary_messages", "summary_parents", "context_items", "large_files"];
    const columns = (path: string) => {
      const database = new DatabaseSync(path, { readOnly: true });
      try {
        return Object.fromEntries(tables.map((table) => [table, (database.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((row) => row.name).sort()]));
      } finally {
        database.close();
      }
    };
    for (const [line, version] of [["0.1", "0.1.4"], ["1.x", "1.0.0-beta.4"]] as const) {
      const built = join(tempDir(), "lcm.db");
      new PeerWriter(built, line).close();
      expect(columns(built), `${line} against ${version}`).toEqual(columns(unpackPeer(version)));
    }
  });
});
