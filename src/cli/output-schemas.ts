/**
 * The JSON each `lcm <command> --json` prints, as TypeBox schemas: the contract scripts rely on. The tests validate
 * real output against them (test/cli); a change to a command's data that breaks a schema breaks a test first.
 * Objects allow more properties than listed (new fields may be added); listed ones keep their types.
 */
import { type TSchema, Type } from "@sinclair/typebox";

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Count = Type.Integer({ minimum: 0 });
const Iso = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T" });

/** What OpenClaw's own prompt and tools left the last turn's history (services/host-share.ts). */
const HostShareSchema = Type.Object({
  windowTokens: Nullable(Count), reserveTokens: Nullable(Count), hostBudgetTokens: Count, systemPromptTokens: Nullable(Count),
  toolCount: Count, toolTokens: Count, promptTokens: Count, budgetTokens: Count, assembledTokens: Count,
  floor: Type.Union([Type.Literal("none"), Type.Literal("line"), Type.Literal("summary")]), tooSmall: Type.Boolean(),
});

export const ErrorOutputSchema = Type.Object({
  error: Type.Object({ code: Type.String(), exitCode: Type.Integer({ minimum: 1 }), message: Type.String({ minLength: 1 }) }),
});

const CompactionOutcomeSchema = Type.Object({
  at: Type.Number(), trigger: Type.String(), compacted: Type.Boolean(), tokensBefore: Count, tokensAfter: Count, passes: Count,
  reason: Type.Optional(Type.String()), spendGuardDiverted: Type.Optional(Count),
});

/** services/status-service.ts SpendGuardView: the count where this process keeps it (the gateway), else only the limits. */
const SpendGuardViewSchema = Type.Union([
  Type.Object({
    visible: Type.Literal(true), calls: Count, maxCalls: Count, windowMs: Count, capped: Type.Boolean(), freesAt: Nullable(Type.Number()), diverted: Count,
  }),
  Type.Object({ visible: Type.Literal(false), maxCalls: Count, windowMs: Count, where: Type.String({ minLength: 1 }) }),
]);

const RetentionPolicySchema = Type.Object({ maxDatabaseBytes: Nullable(Count), maxAgeMs: Nullable(Count), pruneEndedSessions: Type.Boolean() });
const AutoVacuumSchema = Type.Union([Type.Literal("none"), Type.Literal("full"), Type.Literal("incremental"), Type.Literal("server")]);
const CoveredSchema = Type.Object({ messages: Count, tokens: Count });

/** retention/storage-status.ts StorageStatus: size, growth, and what retention would do (estimates). */
const StorageStatusSchema = Type.Object({
  usedBytes: Count, freeBytes: Count, autoVacuum: AutoVacuumSchema,
  growth: Type.Object({ days: Count, messages: Count, bytes: Count }),
  retention: Type.Union([
    Type.Object({
      enabled: Type.Literal(false), exampleAgeCap: Type.Object({ days: Count, messages: Count, tokens: Count }), covered: CoveredSchema,
      endedConversations: Count,
    }),
    Type.Object({
      enabled: Type.Literal(true), policy: RetentionPolicySchema, overCapBytes: Count, prunable: CoveredSchema, endedConversations: Count,
      nextRun: Type.Object({ maxMessages: Count, maxConversations: Count, intervalMinutes: Count }), lastArchiveAt: Nullable(Type.Number()),
    }),
  ]),
});

export const StatusOutputSchema = Type.Object({
  databasePath: Type.String(),
  databasePathSource: Type.Union([Type.Literal("--db"), Type.Literal("LCM_DATABASE_PATH"), Type.Literal("openclaw-config"), Type.Literal("default")]),
  file: Type.Object({
    backend: Type.Union([Type.Literal("sqlite"), Type.Literal("postgresql")]), schemaVersion: Count, sizeBytes: Count, freeBytes: Count,
    journalMode: Type.String(), applicationId: Nullable(Type.Integer()), pageSize: Nullable(Count), pageCount: Nullable(Count),
    freePages: Nullable(Count), walBytes: Count,
  }),
  status: Type.Object({
    now: Type.Number(),
    databasePath: Type.String(),
    readOnlyNotice: Nullable(Type.String()),
    conversation: Nullable(Type.Object({
      conversationId: Count, agentId: Type.String(), sessionId: Type.String(), sessionKey: Nullable(Type.String()),
      messages: Count, archivedMessages: Count, messageTokens: Count, contextItems: Count, contextTokens: Count, contextRawTokens: Count,
      budgetTokens: Count, budgetIsDefault: Type.Boolean(), budgetPercent: Count, overBudget: Type.Boolean(),
      summaries: Type.Array(Type.Object({ depth: Count, count: Count, tokens: Count, fallbackCount: Count })),
      fallbackSummaries: Count,
      lastCompaction: Nullable(CompactionOutcomeSchema),
      lastIngestAt: Nullable(Type.Number()),
      spendGuard: SpendGuardViewSchema,
      hostShare: Type.Optional(Nullable(HostShareSchema)),
    })),
    note: Nullable(Type.String()),
    totals: Type.Object({
      conversations: Count, messages: Count, messageTokens: Count, awaitingIndex: Count, archivedMessages: Count,
    }),
    storage: Nullable(StorageStatusSchema),
    summarizers: Type.Array(Type.Object({ key: Type.String(), state: Type.Union([Type.Literal("closed"), Type.Literal("open"), Type.Literal("half-open")]) })),
    spendGuard: Type.Union([
      Type.Object({
        maxCallsPerWindow: Count, windowMinutes: Count, visible: Type.Literal(true), conversations: Count, capped: Count, maxCallsInWindow: Count,
      }),
      Type.Object({ maxCallsPerWindow: Count, windowMinutes: Count, visible: Type.Literal(false), where: Type.String({ minLength: 1 }) }),
    ]),
  }),
});

export const ConversationsOutputSchema = Type.Object({
  databasePath: Type.String(),
  count: Count,
  limit: Count,
  conversations: Type.Array(Type.Object({
    conversationId: Count, agentId: Type.String(), sessionId: Type.String(), sessionKey: Nullable(Type.String()),
    messages: Count, messageTokens: Count, contextItems: Count, contextTokens: Count, budgetTokens: Count,
    summaries: Count, fallbackSummaries: Count, maxDepth: Nullable(Count),
    lastActivityAt: Iso, lastMessageAt: Nullable(Iso),
    lastCompaction: Nullable(Type.Object({ at: Iso, trigger: Type.String(), compacted: Type.Boolean() })),
    flags: Type.Array(Type.String()),
  })),
});

export const ContextOutputSchema = Type.Object({
  conversationId: Count,
  budgetTokens: Count,
  budgetSource: Type.Union([Type.Literal("recorded"), Type.Literal("default")]),
  systemPromptAddition: Type.Object({ included: Type.Boolean(), tokens: Count, text: Type.String() }),
  hostShare: Nullable(HostShareSchema),
  messages: Type.Array(Type.Object({
    index: Type.Integer({ minimum: 1 }), role: Type.String(),
    kind: Type.Union([Type.Literal("summary"), Type.Literal("message"), Type.Literal("floor")]), tokens: Count, text: Type.String(),
  })),
  totals: Type.Object({
    estimatedTokens: Count, summaryTokens: Count, rawTokens: Count, summaryCount: Count, rawMessageCount: Count, floorTokens: Count,
    evictedOlderItems: Type.Boolean(), boundedNewest: Type.Boolean(),
  }),
});

const DagNodeSchema = Type.Recursive((Self) => Type.Object({
  summaryId: Type.String({ pattern: "^sum_[0-9a-f]{16}$" }),
  kind: Type.Union([Type.Literal("leaf"), Type.Literal("condensed")]),
  depth: Count, level: Type.String(), tokenCount: Count, sourceTokenCount: Count, sourceMessageCount: Count, descendantCount: Count,
  seqStart: Count, seqEnd: Count, earliestAt: Iso, latestAt: Iso, createdAt: Iso,
  parentSummaryIds: Type.Array(Type.String()), inContext: Type.Boolean(), preview: Type.String(),
  children: Type.Array(Self),
}));

export const DagOutputSchema = Type.Object({ conversationId: Count, summaries: Count, rawContextTokens: Count, roots: Type.Array(DagNodeSchema) });

export const GrepOutputSchema = Type.Object({
  pattern: Type.String(),
  mode: Type.Union([Type.Literal("regex"), Type.Literal("full_text")]),
  scope: Type.String(),
  sort: Type.String(),
  searchedConversations: Count,
  matchCount: Count,
  limitReached: Type.Boolean(),
  truncated: Type.Boolean(),
  note: Nullable(Type.String()),
  matches: Type.Array(Type.Object({
    type: Type.Union([Type.Literal("message"), Type.Literal("summary"), Type.Literal("file")]),
    conversationId: Count,
    snippet: Type.String(),
  })),
});

export const DescribeOutputSchema = Type.Object({
  type: Type.Union([Type.Literal("summary"), Type.Literal("file")]),
  conversationId: Count,
});

export const ExpandOutputSchema = Type.Union([
  Type.Object({
    kind: Type.Literal("walk"), summaryId: Type.String(), conversationId: Count, estimatedTokens: Count, truncated: Type.Boolean(),
    unexpandedSummaryIds: Type.Array(Type.String()),
    items: Type.Array(Type.Object({ type: Type.Union([Type.Literal("summary"), Type.Literal("message")]), content: Type.String() })),
  }),
  Type.Object({
    kind: Type.Literal("query"), answer: Type.String(), citedIds: Type.Array(Type.String()), mode: Type.String(), truncated: Type.Boolean(),
  }),
]);

const FindingSchema = Type.Object({ kind: Type.String(), conversationId: Nullable(Count), subject: Type.String(), detail: Type.String() });

export const DoctorOutputSchema = Type.Object({
  databasePath: Type.String(),
  indexesChecked: Type.Boolean(),
  conversationsChecked: Count,
  checksRun: Count,
  durationMs: Count,
  complete: Type.Boolean(),
  findings: Type.Array(FindingSchema),
  repairsAvailable: Type.Array(Type.Object({ kind: Type.String() })),
  needsOperator: Type.Array(Type.Object({ kind: Type.String(), subject: Type.String(), advice: Type.String() })),
  applied: Type.Array(Type.Object({ kind: Type.String() })),
  remaining: Nullable(Type.Array(FindingSchema)),
  healthy: Type.Boolean(),
});

export const CompactOutputSchema = Type.Object({
  conversationId: Count,
  ok: Type.Boolean(),
  compacted: Type.Boolean(),
  reason: Type.String(),
  tokensBefore: Type.Optional(Count),
  tokensAfter: Type.Optional(Count),
  compactionId: Type.Optional(Type.String({ pattern: "^cmp_[0-9a-f]{12}$" })),
  details: Type.Optional(Type.Object({ passes: Count, summarizer: Type.String(), divertedBySpendGuard: Count, targetTokens: Count, budgetTokens: Count })),
});

export const BackupOutputSchema = Type.Object({
  path: Type.String(), source: Type.String(), bytes: Count, pages: Count, rows: Type.Optional(Count),
  method: Type.Union([Type.Literal("backup-api"), Type.Literal("vacuum-into"), Type.Literal("table-copy")]), durationMs: Count, check: Type.Literal("ok"),
  /** The backup file's permissions, the database's (octal text, "0600"). */
  mode: Type.String(),
  /** The backup's stored-files folder (`<backup name>-files` beside it); null when the database holds no stored file. */
  filesDirectory: Nullable(Type.String()),
  files: Type.Object({
    directory: Nullable(Type.String()), copied: Count, bytes: Count,
    missing: Type.Array(Type.Object({ fileId: Type.String(), path: Type.String(), reason: Type.String() })),
  }),
});

/** `lcm migrate <direction>`: rows copied per table (transfer/table-migration.ts). */
export const MigrateOutputSchema = Type.Object({
  direction: Type.Union([Type.Literal("sqlite-to-postgres"), Type.Literal("postgres-to-sqlite")]),
  source: Type.String({ minLength: 1 }), target: Type.String({ minLength: 1 }), copied: Count, durationMs: Count,
  /** Messages and summaries the target's full-text index took in after the copy. */
  indexed: Count,
  /** Bytes of stored files' content the target's index took in after the copy. */
  indexedFileBytes: Count,
  tables: Type.Array(Type.Object({ table: Type.String(), sourceRows: Count, copied: Count, alreadyThere: Count })),
});

const ExportedConversationSchema = Type.Object({
  conversationId: Count, agentId: Type.String(), sessionId: Type.String(), messages: Count, summaries: Count, contextItems: Count,
  largeFiles: Count, missingFiles: Count,
});

export const ExportOutputSchema = Type.Object({
  format: Type.Union([Type.Literal("jsonl"), Type.Literal("markdown")]),
  /** True when `lcm import jsonl` restores the file exactly; false for Markdown, or stored files written without content. */
  lossless: Type.Boolean(), missingFileIds: Type.Array(Type.String()), path: Type.String(), databasePath: Type.String(),
  bytes: Count, durationMs: Count, conversations: Type.Array(ExportedConversationSchema),
});

export const ImportJsonlOutputSchema = Type.Object({
  dryRun: Type.Boolean(), path: Type.String(), databasePath: Type.String(), databaseCreated: Type.Boolean(), records: Count,
  imported: Count, resumed: Count, skipped: Count, indexed: Count, durationMs: Count,
  conversations: Type.Array(Type.Object({
    agentId: Type.String(), sessionId: Type.String(), sessionKey: Nullable(Type.String()), createdAt: Type.Number(),
    outcome: Type.Union([Type.Literal("imported"), Type.Literal("resumed"), Type.Literal("skipped")]), conversationId: Nullable(Count),
    messages: Count, summaries: Count, contextItems: Count, largeFiles: Count, reason: Nullable(Type.String()),
  })),
});

const BackfillStatusSchema = Type.Union(["imported", "up-to-date", "ignored", "empty", "unavailable", "failed"].map((status) => Type.Literal(status)));

export const ImportOpenClawOutputSchema = Type.Object({
  dryRun: Type.Boolean(), stateDir: Type.String(), databasePath: Type.String(), databaseCreated: Type.Boolean(), sessions: Count, importedMessages: Count,
  /** How sessions in OpenClaw's agent databases were read: its own reader (openclaw lcm), the file read-only, or none found. */
  reader: Nullable(Type.Union([Type.Literal("host"), Type.Literal("agent-database")])),
  agents: Type.Array(Type.Object({
    agentId: Type.String(), database: Nullable(Type.String()), sessionsDirectory: Nullable(Type.String()), sessions: Count,
  })),
  /** What was found and not read, and why. */
  unread: Type.Array(Type.Object({ agentId: Type.String(), subject: Type.String(), sessionKey: Nullable(Type.String()), reason: Type.String() })),
  byStatus: Type.Object({ imported: Count, "up-to-date": Count, ignored: Count, empty: Count, unavailable: Count, failed: Count }),
  indexed: Count, durationMs: Count,
  results: Type.Array(Type.Object({
    agentId: Type.String(), sessionId: Type.String(), sessionKey: Nullable(Type.String()),
    source: Nullable(Type.Union([Type.Literal("file"), Type.Literal("host")])), conversationId: Nullable(Count),
    status: BackfillStatusSchema, imported: Count, note: Nullable(Type.String()),
  })),
});

const PeerCountsSchema = Type.Object({
  conversations: Count, messages: Count, messageParts: Count, summaries: Count, summaryMessages: Count, summaryParents: Count,
  contextItems: Count, largeFiles: Count,
});

export const ImportLosslessClawOutputSchema = Type.Object({
  source: Type.Object({
    path: Type.String(), schemaLine: Type.Union([Type.Literal("0.x"), Type.Literal("1.x")]), versionRange: Type.String(), fingerprint: Type.String(),
  }),
  /** As `import jsonl` and `import openclaw` say it: true unless --apply. */
  dryRun: Type.Boolean(),
  databasePath: Type.String(),
  databaseCreated: Type.Boolean(),
  /** The same as databasePath and the opposite of dryRun, kept for scripts written against the first version. */
  target: Type.String(),
  applied: Type.Boolean(),
  sourceCounts: PeerCountsSchema,
  conversations: Type.Object({ total: Count, imported: Count, resumed: Count, alreadyImported: Count, archived: Count, notImported: Count }),
  written: Type.Object({
    conversations: Count, messages: Count, messageParts: Count, summaries: Count, summaryMessages: Count, summaryParents: Count,
    contextItems: Count, largeFiles: Count,
  }),
  unmapped: Type.Array(Type.Object({ kind: Type.String(), count: Count, examples: Type.Array(Type.String()) })),
  notImportedTables: Type.Record(Type.String(), Count),
  durationMs: Count,
  messagesPerSecond: Count,
  indexed: Nullable(Type.Object({ messages: Count, pending: Count })),
});

export const RetentionOutputSchema = Type.Object({
  enabled: Type.Boolean(), applied: Type.Boolean(),
  policy: Nullable(RetentionPolicySchema),
  usedBytesBefore: Count, usedBytesAfter: Count, overCapBytes: Count,
  autoVacuum: AutoVacuumSchema,
  conversations: Type.Array(Type.Object({ conversationId: Count, agentId: Type.String(), sessionId: Type.String(), messages: Count, archivePath: Nullable(Type.String()) })),
  messages: Type.Object({ count: Count, bytes: Count, archivePaths: Type.Array(Type.String()) }),
  vacuumedBytes: Count, removedFiles: Count, busyConversations: Type.Array(Count), stoppedEarly: Type.Boolean(), durationMs: Count, longestSliceMs: Type.Number({ minimum: 0 }),
  longestSliceCpuMs: Nullable(Type.Number({ minimum: 0 })),
  thread: Type.Union([Type.Literal("calling"), Type.Literal("worker")]), callerLoopMaxDelayMs: Nullable(Type.Number({ minimum: 0 })),
  callerBusyMs: Nullable(Type.Number({ minimum: 0 })),
  databasePath: Type.String(), archiveDirectory: Type.String(), fullVacuum: Type.Boolean(),
});
