/**
 * The importer's first pass: every line of an export checked without writing anything: JSON, record shape, values no
 * reader could use (export-values.ts), block order, references inside the block, what the database's constraints
 * would refuse (an identity, a part ordinal, an edge or a file's content twice; a summary or file id, or a live
 * session, twice in the file), seqs without gaps, the end record's counts; then each block decided against the
 * database (import, resume, skip, or refuse and why). A file that fails here changes nothing. A retention archive of a
 * whole conversation (its `retentionArchive` header line, then an export block) is read as the export it holds.
 */
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { LcmError } from "../errors.js";
import {
  type ConversationExportRecord,
  type EndExportRecord,
  EXPORT_FORMAT,
  EXPORT_FORMAT_VERSION,
  type ExportRecord,
  IMPORTING_REASON,
} from "../store/export-format.js";
import type { ExportStore } from "../store/export-store.js";
import { RECORD_CHECKS } from "./export-schema.js";
import { valueProblem } from "./export-values.js";

/** One conversation block of the file, checked. */
export interface ValidatedBlock {
  line: number;
  conversation: ConversationExportRecord;
  end: EndExportRecord;
  summaryIds: string[];
  fileIds: string[];
}

export type BlockDecision =
  | { kind: "import" }
  /** An import of this block stopped before its end: the rows already written stay, the rest follows. */
  | { kind: "resume"; conversationId: number }
  | { kind: "skip"; conversationId: number; reason: string }
  | { kind: "refuse"; reason: string };

export interface BlockPlan extends ValidatedBlock {
  decision: BlockDecision;
}

/** The first line of a retention archive (retention/retention-service.ts); a whole conversation's is followed by an export block. */
const RETENTION_HEADER = "retentionArchive";

/** Order of record types inside a block. */
const STAGE = { conversation: 0, largeFile: 1, message: 2, summary: 3, contextItem: 4, end: 5 } as const;

export async function validateExportLines(
  lines: AsyncIterable<string>, path: string, onProgress?: (records: number) => void,
): Promise<{ blocks: ValidatedBlock[]; records: number }> {
  const blocks: ValidatedBlock[] = [];
  const keys = new Set<string>();
  /** Across the whole file: ids the database holds once, and sessions with a live conversation. */
  const summaryOwners = new Map<string, string>();
  const fileOwners = new Map<string, string>();
  const liveSessions = new Map<string, string>();
  let block: BlockState | null = null;
  let lineNumber = 0;
  let records = 0;
  const fail = (message: string): never => {
    throw new LcmError("invalid_input", `${path} line ${lineNumber}: ${message} Nothing was imported; pass a file \`lcm export --format jsonl\` wrote, whole.`);
  };
  for await (const text of lines) {
    lineNumber++;
    if (text.trim() === "") continue;
    let record: ExportRecord;
    try {
      record = JSON.parse(text) as ExportRecord;
    } catch {
      fail("not valid JSON.");
    }
    const type = (record! as { type?: unknown }).type;
    if (type === RETENTION_HEADER && records === 0) {
      const kind = (record! as { kind?: unknown }).kind;
      if (kind !== "conversation") fail(`a retention archive of ${JSON.stringify(kind)} holds pruned messages, not a conversation block; read it with zcat (their stubs stay in the database).`);
      continue;
    }
    records++;
    if (records % 5_000 === 0) {
      onProgress?.(records);
      await yieldToEventLoop();
    }
    if (typeof type !== "string" || !(type in RECORD_CHECKS)) fail(`unknown record type ${JSON.stringify(type)}.`);
    const check = RECORD_CHECKS[type as keyof typeof RECORD_CHECKS];
    if (!check.Check(record!)) {
      const error = check.Errors(record!).First();
      fail(`the ${type} record is malformed (${error ? `${error.path || "/"}: ${error.message}` : "unexpected shape"}).`);
    }
    const valueError = valueProblem(record!);
    if (valueError) fail(valueError);
    if (record!.type === "conversation") {
      if (block) fail("a conversation record inside another conversation's block (its end record is missing).");
      const conversation = record! as ConversationExportRecord;
      if (conversation.format !== EXPORT_FORMAT) fail(`format ${JSON.stringify(conversation.format)} is not ${EXPORT_FORMAT}.`);
      if (conversation.version > EXPORT_FORMAT_VERSION) {
        fail(`export format version ${conversation.version} is newer than this LCM reads (${EXPORT_FORMAT_VERSION}); upgrade LCM.`);
      }
      const key = `${conversation.agentId}\u0000${conversation.sessionId}\u0000${conversation.createdAt}`;
      if (keys.has(key)) fail(`conversation ${conversation.agentId}/${conversation.sessionId} appears twice in the file.`);
      keys.add(key);
      const name = `${conversation.agentId}/${conversation.sessionId} (line ${lineNumber})`;
      if (conversation.archivedAt === null) {
        const session = `${conversation.agentId}\u0000${conversation.sessionId}`;
        const other = liveSessions.get(session);
        if (other) fail(`conversation ${name} is live, and so is ${other}: a session has one live conversation.`);
        liveSessions.set(session, name);
      }
      block = newBlock(lineNumber, conversation);
      continue;
    }
    if (!block) fail(`a ${record!.type} record outside a conversation block (the file must start with a conversation record).`);
    const owner = record!.type === "summary" ? { ids: summaryOwners, id: record!.summaryId, what: "summary" }
      : record!.type === "largeFile" ? { ids: fileOwners, id: record!.fileId, what: "large file" } : null;
    if (owner) {
      const here = `${block!.conversation.agentId}/${block!.conversation.sessionId}`;
      const other = owner.ids.get(owner.id);
      if (other !== undefined && other !== here) fail(`${owner.what} ${owner.id} belongs to conversation ${other} too: an id is stored once.`);
      owner.ids.set(owner.id, here);
    }
    const problem = block!.accept(record!);
    if (problem) fail(problem);
    if (record!.type === "end") {
      blocks.push({ line: block!.line, conversation: block!.conversation, end: record!, summaryIds: [...block!.summaryIds], fileIds: block!.fileIds });
      block = null;
    }
  }
  if (block) {
    lineNumber++;
    fail(`the file ends inside the block of conversation ${block.conversation.agentId}/${block.conversation.sessionId} (truncated?).`);
  }
  if (blocks.length === 0) fail("the file holds no conversation.");
  return { blocks, records };
}

interface BlockState {
  line: number;
  conversation: ConversationExportRecord;
  summaryIds: Set<string>;
  fileIds: string[];
  /** Returns what is wrong with the record, or null. */
  accept(record: ExportRecord): string | null;
}

function newBlock(line: number, conversation: ConversationExportRecord): BlockState {
  let stage: number = STAGE.conversation;
  let lastSeq = 0;
  const identities = new Set<string>();
  const contentHashes = new Set<string>();
  let lastOrdinal = Number.MIN_SAFE_INTEGER;
  const seqs = new Set<number>();
  const counts = { messages: 0, summaries: 0, contextItems: 0, largeFiles: 0, missingFiles: 0 };
  const state: BlockState = {
    line, conversation, summaryIds: new Set(), fileIds: [],
    accept(record) {
      const recordStage = STAGE[record.type];
      if (recordStage < stage) return `a ${record.type} record after records that must follow it (order: conversation, largeFile, message, summary, contextItem, end).`;
      stage = recordStage;
      switch (record.type) {
        case "largeFile": {
          if (!record.storedName.startsWith(`${record.fileId}.`)) return `large file ${record.fileId} has the stored name ${record.storedName}.`;
          if (contentHashes.has(record.contentHash)) return `large file ${record.fileId} has the content hash of an earlier file of the block (${record.contentHash}).`;
          contentHashes.add(record.contentHash);
          if (record.contentBase64 !== null && Buffer.byteLength(record.contentBase64, "base64") !== record.byteSize) {
            return `the content of large file ${record.fileId} is not ${record.byteSize} bytes.`;
          }
          state.fileIds.push(record.fileId);
          counts.largeFiles++;
          if (record.contentBase64 === null) counts.missingFiles++;
          return null;
        }
        case "message": {
          if (record.seq !== lastSeq + 1) return `message seq ${record.seq} does not follow ${lastSeq} (seqs run 1, 2, 3… without gaps).`;
          if (record.seq >= conversation.nextSeq) return `message seq ${record.seq} is not below the conversation's next seq ${conversation.nextSeq}.`;
          if (identities.has(record.identityKey)) return `message ${record.seq} has the identity of an earlier message (${record.identityKey}).`;
          identities.add(record.identityKey);
          const ordinals = new Set(record.parts.map((part) => part.ordinal));
          if (ordinals.size !== record.parts.length) return `message ${record.seq} has two parts with one ordinal.`;
          if (record.archive && (record.content !== "" || record.parts.length > 0)) {
            return `message ${record.seq} names an archive but holds text: a pruned message keeps only its stub.`;
          }
          for (const part of record.parts) {
            if (part.start !== null && (part.end === null || part.start > part.end || part.end > record.content.length)) {
              return `message ${record.seq} has a part span [${part.start}, ${part.end}) outside its content.`;
            }
          }
          lastSeq = record.seq;
          seqs.add(record.seq);
          counts.messages++;
          return null;
        }
        case "summary": {
          if (state.summaryIds.has(record.summaryId)) return `summary ${record.summaryId} appears twice.`;
          if (new Set(record.sourceMessages.map((edge) => edge.seq)).size !== record.sourceMessages.length) return `summary ${record.summaryId} names a source message twice.`;
          if (new Set(record.sourceSummaries.map((edge) => edge.summaryId)).size !== record.sourceSummaries.length) return `summary ${record.summaryId} names a source summary twice.`;
          const missingMessage = record.sourceMessages.find((edge) => !seqs.has(edge.seq));
          if (missingMessage) return `summary ${record.summaryId} summarizes message ${missingMessage.seq}, which the block does not hold.`;
          const missingSummary = record.sourceSummaries.find((edge) => !state.summaryIds.has(edge.summaryId));
          if (missingSummary) return `summary ${record.summaryId} condenses ${missingSummary.summaryId}, which does not come before it.`;
          state.summaryIds.add(record.summaryId);
          counts.summaries++;
          return null;
        }
        case "contextItem": {
          if (record.ordinal <= lastOrdinal) return `context item ${record.ordinal} does not follow ${lastOrdinal}.`;
          if ((record.messageSeq === null) === (record.summaryId === null)) return `context item ${record.ordinal} must name exactly one message or summary.`;
          if (record.messageSeq !== null && !seqs.has(record.messageSeq)) return `context item ${record.ordinal} names message ${record.messageSeq}, which the block does not hold.`;
          if (record.summaryId !== null && !state.summaryIds.has(record.summaryId)) return `context item ${record.ordinal} names summary ${record.summaryId}, which the block does not hold.`;
          lastOrdinal = record.ordinal;
          counts.contextItems++;
          return null;
        }
        case "end": {
          const expected = JSON.stringify(counts);
          const found = JSON.stringify({ messages: record.messages, summaries: record.summaries, contextItems: record.contextItems, largeFiles: record.largeFiles, missingFiles: record.missingFiles });
          return expected === found ? null : `the end record counts ${found}, the block holds ${expected}.`;
        }
        default:
          return `unexpected ${record.type} record.`;
      }
    },
  };
  return state;
}

/** Decides a block against the store: reads only, writes nothing. */
export async function planBlock(store: ExportStore, block: ValidatedBlock): Promise<BlockPlan> {
  const { conversation } = block;
  const name = `conversation ${conversation.agentId}/${conversation.sessionId} (created ${new Date(conversation.createdAt).toISOString()})`;
  const existing = await store.findConversation(conversation);
  const isResume = existing?.archiveReason === IMPORTING_REASON;
  if (existing && !isResume) {
    return { ...block, decision: { kind: "skip", conversationId: existing.conversationId, reason: `${name} is already stored as conversation ${existing.conversationId}.` } };
  }
  const self = existing?.conversationId ?? null;
  const takenSummary = await store.firstSummaryElsewhere(block.summaryIds, self);
  if (takenSummary) return refuse(block, `${name}: its summary ${takenSummary.id} already belongs to conversation ${takenSummary.conversationId}.`);
  const takenFile = await store.firstFileElsewhere(block.fileIds, self);
  if (takenFile) return refuse(block, `${name}: its large file ${takenFile.id} already belongs to conversation ${takenFile.conversationId}.`);
  if (conversation.archivedAt === null) {
    const live = await store.liveConversationOf(conversation.agentId, conversation.sessionId);
    if (live !== null) {
      return refuse(block, `${name} is live in the file, and conversation ${live} is the live conversation of that session here ` +
        "(a session has one live conversation): import into another database, or archive that conversation first.");
    }
  }
  return { ...block, decision: existing ? { kind: "resume", conversationId: existing.conversationId } : { kind: "import" } };
}

function refuse(block: ValidatedBlock, reason: string): BlockPlan {
  return { ...block, decision: { kind: "refuse", reason } };
}
