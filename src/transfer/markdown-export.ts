/**
 * A conversation as Markdown for people (`lcm export --format markdown`): its messages in order, each under a heading
 * with its number, role and time, and each summary as a quoted block right after the last message it covers. Not
 * meant to be imported (the JSONL export is the lossless form). Host-free; reads in pages with the event loop running
 * between them, like jsonl-export.ts.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { Database } from "../sqlite/database.js";
import { LcmError } from "../errors.js";
import { MessageFlags } from "../messages/message-codec.js";
import { EXPORT_PAGE_ROWS } from "./jsonl-export.js";

type MessageTuple = [seq: number, role: string, content: string, createdAt: number, flags: number, archivePath: string | null];
type SummaryTuple = [rowId: number, summaryId: string, kind: string, depth: number, content: string, seqStart: number, seqEnd: number, earliestAt: number, latestAt: number, level: string];

/** Yields the Markdown of one conversation in pieces (each ends with a newline); throws LcmError("not_found"). */
export async function* exportConversationMarkdown(db: Database, conversationId: number): AsyncGenerator<string> {
  const conversation = db.get<{
    agent_id: string; session_id: string; session_key: string | null; created_at: number; updated_at: number;
    next_seq: number; message_count: number; archived_at: number | null; ended_at: number | null;
  }>(
    `SELECT agent_id, session_id, session_key, created_at, updated_at, next_seq, message_count, archived_at, ended_at
     FROM conversations WHERE conversation_id = ?`, conversationId,
  );
  if (!conversation) throw new LcmError("not_found", `Conversation ${conversationId} is not stored in ${db.path}; \`lcm conversations\` lists the stored ones.`);
  const summaryCount = db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE conversation_id = ?", conversationId)!.n;
  yield [
    `# Conversation ${conversationId}: agent \`${conversation.agent_id}\`, session \`${conversation.session_key ?? conversation.session_id}\``,
    "",
    `- Session id: \`${conversation.session_id}\``,
    `- Created ${iso(conversation.created_at)}, last activity ${iso(conversation.updated_at)}`,
    `- ${conversation.message_count} messages, ${summaryCount} summaries`,
    ...(conversation.archived_at !== null ? [`- Archived ${iso(conversation.archived_at)}`] : []),
    ...(conversation.ended_at !== null ? [`- Ended ${iso(conversation.ended_at)}`] : []),
    "",
    "",
  ].join("\n");

  const summaries = summaryPages(db, conversationId);
  let pending = await summaries.next();
  for (let after = 0; ;) {
    const page = db.tuples<MessageTuple>(
      `SELECT m.seq, m.role, m.content, m.created_at, m.flags, a.path FROM messages m LEFT JOIN retention_archives a ON a.archive_id = m.archive_id
       WHERE m.conversation_id = ? AND m.seq > ? AND m.seq < ? ORDER BY m.seq LIMIT ?`,
      conversationId, after, conversation.next_seq, EXPORT_PAGE_ROWS,
    );
    const pieces: string[] = [];
    for (const [seq, role, content, createdAt, flags, archivePath] of page) {
      const excluded = (flags & MessageFlags.excluded) !== 0 ? " · not in context" : "";
      const text = archivePath !== null ? `_(archived by retention: the text is in ${archivePath})_` : content.trimEnd() || "_(no text)_";
      pieces.push(`### #${seq} · ${role} · ${iso(createdAt)}${excluded}\n\n${text}\n\n`);
      while (!pending.done && pending.value[6] <= seq) {
        pieces.push(summaryBlock(pending.value));
        pending = await summaries.next();
      }
    }
    if (pieces.length > 0) yield pieces.join("");
    if (page.length < EXPORT_PAGE_ROWS) break;
    after = page.at(-1)![0];
    await yieldToEventLoop();
  }
  // Summaries past the last message (none in a consistent database) are still shown.
  while (!pending.done) {
    yield summaryBlock(pending.value);
    pending = await summaries.next();
  }
}

/** Summaries in the order they are shown: by the last message covered, leaves before what condenses them. */
async function* summaryPages(db: Database, conversationId: number): AsyncGenerator<SummaryTuple> {
  for (let after: [number, number, number] = [0, -1, 0]; ;) {
    const page = db.tuples<SummaryTuple>(
      `SELECT id, summary_id, kind, depth, content, seq_start, seq_end, earliest_at, latest_at, level FROM summaries
       WHERE conversation_id = ? AND (seq_end, depth, id) > (?, ?, ?) ORDER BY seq_end, depth, id LIMIT ?`,
      conversationId, after[0], after[1], after[2], EXPORT_PAGE_ROWS,
    );
    yield* page;
    if (page.length < EXPORT_PAGE_ROWS) return;
    const last = page.at(-1)!;
    after = [last[6], last[3], last[0]];
    await yieldToEventLoop();
  }
}

function summaryBlock([, summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level]: SummaryTuple): string {
  const quoted = content.trimEnd().split("\n").map((line) => (line === "" ? ">" : `> ${line}`)).join("\n");
  const levelNote = level === "normal" ? "" : `, ${level}`;
  return `> **Summary ${summaryId}** (${kind}, depth ${depth}${levelNote}) of messages #${seqStart}–#${seqEnd}, ` +
    `${iso(earliestAt)} to ${iso(latestAt)}\n>\n${quoted}\n\n`;
}

function iso(millis: number): string {
  return Number.isFinite(millis) ? new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z") : String(millis);
}
