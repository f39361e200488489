/**
 * The shape of each export record (store/export-format.ts) as TypeBox schemas, compiled once: what the importer checks every
 * line against before anything is written, so a damaged or foreign file is refused with the line and field at fault.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

const Int = Type.Integer();
const Count = Type.Integer({ minimum: 0 });
const NullableString = Type.Union([Type.String(), Type.Null()]);
const NullableInt = Type.Union([Int, Type.Null()]);

const ConversationSchema = Type.Object({
  type: Type.Literal("conversation"), format: Type.String(), version: Int,
  agentId: Type.String({ minLength: 1 }), sessionId: Type.String({ minLength: 1 }), sessionKey: NullableString,
  createdAt: Int, updatedAt: Int, lastIngestAt: NullableInt, nextSeq: Type.Integer({ minimum: 1 }), nextOrdinal: Int,
  messageCount: Count, messageTokens: Count, contextTokens: Count, contextRawTokens: Count, contextItems: Count,
  lastTokenBudget: NullableInt, lastWindowTokens: NullableInt, lastReserveTokens: NullableInt,
  bootstrapState: NullableString, lastCompaction: NullableString, sessionStartedAt: NullableInt, lastReset: NullableString,
  previousConversation: Type.Union([Type.Object({ agentId: Type.String(), sessionId: Type.String(), createdAt: Int }), Type.Null()]),
  archivedAt: NullableInt, archiveReason: NullableString, endedAt: NullableInt, endReason: NullableString,
});

const LargeFileSchema = Type.Object({
  type: Type.Literal("largeFile"), fileId: Type.String({ pattern: "^file_[a-f0-9]{16}$" }), contentHash: Type.String(),
  fileName: NullableString, mimeType: NullableString, byteSize: Count, tokenCount: Count,
  storedName: Type.String({ pattern: "^file_[a-f0-9]{16}\\.[a-z0-9]{1,10}$" }), explorationSummary: Type.String(),
  explorer: Type.String(), origin: Type.String(), toolName: NullableString, createdAt: Int, contentBase64: NullableString,
});

const MessageSchema = Type.Object({
  type: Type.Literal("message"), seq: Type.Integer({ minimum: 1 }), role: Type.String({ minLength: 1 }), content: Type.String(),
  tokenCount: Count, createdAt: Int, identityKey: Type.String({ minLength: 1 }), flags: Count, meta: Type.String(),
  parts: Type.Array(Type.Object({
    ordinal: Count, kind: Type.String({ minLength: 1 }), start: NullableInt, end: NullableInt, data: NullableString, meta: NullableString,
  })),
  archive: Type.Optional(Type.Object({ path: Type.String({ minLength: 1 }), createdAt: Int, reason: Type.String() })),
});

const SummarySchema = Type.Object({
  type: Type.Literal("summary"), summaryId: Type.String({ pattern: "^sum_[a-f0-9]{16}$" }),
  kind: Type.Union([Type.Literal("leaf"), Type.Literal("condensed")]), depth: Count, content: Type.String(), tokenCount: Count,
  sourceTokenCount: Count, earliestAt: Int, latestAt: Int, descendantCount: Count, sourceMessageCount: Count, seqStart: Int,
  seqEnd: Int, fileIds: Type.String(), level: Type.Union([Type.Literal("normal"), Type.Literal("aggressive"), Type.Literal("fallback")]),
  createdAt: Int,
  sourceMessages: Type.Array(Type.Object({ seq: Type.Integer({ minimum: 1 }), ordinal: Int })),
  sourceSummaries: Type.Array(Type.Object({ summaryId: Type.String({ pattern: "^sum_[a-f0-9]{16}$" }), ordinal: Int })),
});

const ContextItemSchema = Type.Object({
  type: Type.Literal("contextItem"), ordinal: Int, messageSeq: NullableInt, summaryId: NullableString, tokenCount: Count, flags: Count,
});

const EndSchema = Type.Object({
  type: Type.Literal("end"), messages: Count, summaries: Count, contextItems: Count, largeFiles: Count, missingFiles: Count,
});

const compile = <T extends TSchema>(schema: T) => TypeCompiler.Compile(schema);

/** The compiled check of each record type, by its `type`. */
export const RECORD_CHECKS = {
  conversation: compile(ConversationSchema),
  largeFile: compile(LargeFileSchema),
  message: compile(MessageSchema),
  summary: compile(SummarySchema),
  contextItem: compile(ContextItemSchema),
  end: compile(EndSchema),
} as const;
