/**
 * A conversation as Markdown for people (`lcm export --format markdown`): its messages in order, each under a heading
 * with its number, role and time, and each summary as a quoted block right after the last message it covers. Not
 * meant to be imported (the JSONL export is the lossless form). Host-free; reads in pages with the event loop running
 * between them, like jsonl-export.ts.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { LcmError } from "../errors.js";
import { MessageFlags } from "../messages/message-codec.js";
import type { CoverageOrder, ExportStore, SummaryToShow } from "../store/export-store.js";
import { EXPORT_PAGE_ROWS } from "./jsonl-export.js";

/** Yields the Markdown of one conversation in pieces (each ends with a newline); throws LcmError("not_found"). */
export async function* exportConversationMarkdown(store: ExportStore, conversationId: number): AsyncGenerator<string> {
  const conversation = await store.conversation(conversationId);
  if (!conversation) throw new LcmError("not_found", `Conversation ${conversationId} is not stored in ${store.path}; \`lcm conversations\` lists the stored ones.`);
  const summaryCount = (await store.conversationCounts(conversationId))!.summaries;
  yield [
    `# Conversation ${conversationId}: agent \`${conversation.agentId}\`, session \`${conversation.sessionKey ?? conversation.sessionId}\``,
    "",
    `- Session id: \`${conversation.sessionId}\``,
    `- Created ${iso(conversation.createdAt)}, last activity ${iso(conversation.updatedAt)}`,
    `- ${conversation.messageCount} messages, ${summaryCount} summaries`,
    ...(conversation.archivedAt !== null ? [`- Archived ${iso(conversation.archivedAt)}`] : []),
    ...(conversation.endedAt !== null ? [`- Ended ${iso(conversation.endedAt)}`] : []),
    "",
    "",
  ].join("\n");

  const summaries = summaryPages(store, conversationId);
  let pending = await summaries.next();
  for (let after = 0; ;) {
    const page = await store.messages(conversationId, after, conversation.nextSeq, EXPORT_PAGE_ROWS);
    const pieces: string[] = [];
    for (const { seq, role, content, createdAt, flags, archive } of page) {
      const excluded = (flags & MessageFlags.excluded) !== 0 ? " · not in context" : "";
      const text = archive ? `_(archived by retention: the text is in ${archive.path})_` : content.trimEnd() || "_(no text)_";
      pieces.push(`### #${seq} · ${role} · ${iso(createdAt)}${excluded}\n\n${text}\n\n`);
      while (!pending.done && pending.value.seqEnd <= seq) {
        pieces.push(summaryBlock(pending.value));
        pending = await summaries.next();
      }
    }
    if (pieces.length > 0) yield pieces.join("");
    if (page.length < EXPORT_PAGE_ROWS) break;
    after = page.at(-1)!.seq;
    await yieldToEventLoop();
  }
  // Summaries past the last message (none in a consistent database) are still shown.
  while (!pending.done) {
    yield summaryBlock(pending.value);
    pending = await summaries.next();
  }
}

/** Summaries in the order they are shown: by the last message covered, leaves before what condenses them. */
async function* summaryPages(store: ExportStore, conversationId: number): AsyncGenerator<SummaryToShow> {
  for (let after: CoverageOrder | null = null; ;) {
    const page = await store.summariesByCoverage(conversationId, after, EXPORT_PAGE_ROWS);
    for (const { summary } of page) yield summary;
    if (page.length < EXPORT_PAGE_ROWS) return;
    after = page.at(-1)!.order;
    await yieldToEventLoop();
  }
}

function summaryBlock({ summaryId, kind, depth, content, seqStart, seqEnd, earliestAt, latestAt, level }: SummaryToShow): string {
  const quoted = content.trimEnd().split("\n").map((line) => (line === "" ? ">" : `> ${line}`)).join("\n");
  const levelNote = level === "normal" ? "" : `, ${level}`;
  return `> **Summary ${summaryId}** (${kind}, depth ${depth}${levelNote}) of messages #${seqStart}–#${seqEnd}, ` +
    `${iso(earliestAt)} to ${iso(latestAt)}\n>\n${quoted}\n\n`;
}

function iso(millis: number): string {
  return Number.isFinite(millis) ? new Date(millis).toISOString().replace(/\.\d{3}Z$/, "Z") : String(millis);
}
