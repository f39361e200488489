/**
 * The IntegrityChecker verifies the invariants that make LCM lossless (docs/reliability.md): every summary links
 * to a source; every context item points to an existing row of its conversation; context items are in
 * chronological order; no message was deleted (seqs are contiguous, counters agree with the rows); every visible
 * message is either in context or under a leaf summary; summary metadata agrees with its sources; the full-text
 * indexes agree with their tables; every stored large file exists; the context holds no orphan tool result or
 * unanswered tool call; every stored time is one a Date can hold. It reports and plans repairs; only
 * non-destructive repairs are ever applied.
 *
 * `check` covers whole conversations (for `/lcm doctor`); `checkRecent` covers a bounded window of the newest
 * context items (for `maintain`, where it must stay cheap whatever the history size).
 */
import type { SearchIndexName } from "../store/integrity-store.js";
import type { Clock } from "../contracts.js";
import { sanitizeToolCallId } from "../messages/message-codec.js";
import type { ConversationId } from "../records.js";
import type { IntegrityStore, ItemForPairing } from "../store/integrity-store.js";
import type { Finding, IntegrityReport, RepairAction, RepairPlan } from "./findings.js";

const TOOL_CALLS = 1;
const TOOL_RESULT = 2;
export const RECENT_WINDOW_ITEMS = 512;

export interface IntegrityCheckerDeps {
  store: IntegrityStore;
  clock: Clock;
  fileExists(path: string): Promise<boolean>;
  /** Told every report (`recent`: maintain's bounded check; `full`: doctor), e.g. to count findings in the metrics. */
  onReport?: (scope: "recent" | "full", report: IntegrityReport) => void;
}

export interface CheckOptions {
  /** One conversation; all conversations when absent. */
  conversationId?: ConversationId;
  /** Also verify the full-text indexes (a whole-table check). Default true. */
  includeIndexes?: boolean;
  /** Stop starting new conversations after this many milliseconds; the report says it is incomplete. */
  deadlineMs?: number;
  /** Called after each conversation is checked: how many are done, of how many (a progress bar). */
  onProgress?: (checked: number, total: number) => void;
}

export class IntegrityChecker {
  constructor(private readonly deps: IntegrityCheckerDeps) {}

  async check(options: CheckOptions = {}): Promise<IntegrityReport> {
    const started = this.deps.clock.now();
    const findings: Finding[] = [];
    let checksRun = 0;
    let conversationsChecked = 0;
    let complete = true;
    const ids = options.conversationId === undefined ? await this.allConversationIds() : [options.conversationId];
    for (const conversationId of ids) {
      if (options.deadlineMs !== undefined && this.deps.clock.now() - started > options.deadlineMs) {
        complete = false;
        break;
      }
      checksRun += await this.checkConversation(conversationId, findings);
      conversationsChecked++;
      options.onProgress?.(conversationsChecked, ids.length);
    }
    if (options.includeIndexes !== false) {
      for (const index of ["messages", "summaries", "files"] as const) {
        const problem = await this.deps.store.ftsIntegrity(index);
        checksRun++;
        if (problem) findings.push({ kind: "fts_out_of_sync", conversationId: null, subject: index, detail: problem });
      }
    }
    const report = { conversationsChecked, checksRun, findings, durationMs: this.deps.clock.now() - started, complete };
    this.deps.onReport?.("full", report);
    return report;
  }

  /** Bounded check of the newest RECENT_WINDOW_ITEMS context items: order and tool pairing. */
  async checkRecent(conversationId: ConversationId, windowItems = RECENT_WINDOW_ITEMS): Promise<IntegrityReport> {
    const started = this.deps.clock.now();
    const from = await this.deps.store.ordinalOfNthNewestItem(conversationId, windowItems);
    const findings: Finding[] = [];
    for (const row of await this.deps.store.contextOutOfOrder(conversationId, from)) {
      findings.push(outOfOrder(conversationId, row));
    }
    const items = await this.deps.store.itemsForPairing(conversationId, from);
    // The window may open in the middle of a tool unit whose call lies before it: skip those leading results.
    const firstUnit = items.findIndex((item) => !(item.flags & TOOL_RESULT));
    findings.push(...pairingFindings(conversationId, firstUnit < 0 ? [] : items.slice(firstUnit)));
    const report = { conversationsChecked: 1, checksRun: 2, findings, durationMs: this.deps.clock.now() - started, complete: true };
    this.deps.onReport?.("recent", report);
    return report;
  }

  planRepairs(report: IntegrityReport): RepairPlan {
    const nonDestructive: RepairAction[] = [];
    const destructive: RepairAction[] = [];
    const recounted = new Set<ConversationId>();
    const retimed = new Set<ConversationId>();
    const cleared = new Set<ConversationId>();
    for (const finding of report.findings) {
      if (finding.kind === "counter_mismatch" && finding.conversationId !== null && !recounted.has(finding.conversationId)) {
        recounted.add(finding.conversationId);
        nonDestructive.push({ kind: "recount_conversation", conversationId: finding.conversationId });
      } else if (finding.kind === "fts_out_of_sync") {
        nonDestructive.push({ kind: "rebuild_fts", table: finding.subject as SearchIndexName });
      } else if (finding.kind === "timestamp_out_of_range" && finding.conversationId !== null) {
        if (!retimed.has(finding.conversationId)) nonDestructive.push({ kind: "normalize_timestamps", conversationId: finding.conversationId });
        retimed.add(finding.conversationId);
      } else if (finding.kind === "unreadable_value" && finding.conversationId !== null && finding.subject === `conversation ${finding.conversationId}`
        && /bootstrap_state|last_compaction/.test(finding.detail)) {
        if (!cleared.has(finding.conversationId)) nonDestructive.push({ kind: "clear_unreadable_columns", conversationId: finding.conversationId });
        cleared.add(finding.conversationId);
      } else if (finding.kind !== "counter_mismatch") {
        destructive.push({ kind: "manual", finding, advice: ADVICE[finding.kind] });
      }
    }
    return { nonDestructive, destructive };
  }

  /** Applies the non-destructive repairs of a plan; destructive ones are never applied. */
  async applyRepairs(plan: RepairPlan): Promise<RepairAction[]> {
    const applied: RepairAction[] = [];
    for (const action of plan.nonDestructive) {
      if (action.kind === "recount_conversation") await this.deps.store.recountConversation(action.conversationId);
      else if (action.kind === "rebuild_fts") await this.deps.store.rebuildFts(action.table);
      else if (action.kind === "normalize_timestamps") await this.deps.store.repairTimestamps(action.conversationId);
      else if (action.kind === "clear_unreadable_columns") await this.deps.store.clearUnreadableColumns(action.conversationId);
      else continue;
      applied.push(action);
    }
    return applied;
  }

  private async allConversationIds(): Promise<ConversationId[]> {
    const ids: ConversationId[] = [];
    for (let page = await this.deps.store.conversationIds(0, 500); page.length > 0; page = await this.deps.store.conversationIds(ids.at(-1)!, 500)) {
      ids.push(...page);
    }
    return ids;
  }

  /** Runs every per-conversation check; returns how many checks ran. */
  private async checkConversation(conversationId: ConversationId, findings: Finding[]): Promise<number> {
    const { store } = this.deps;
    const add = (kind: Finding["kind"], subject: string | number, detail: string) =>
      findings.push({ kind, conversationId, subject: String(subject), detail });

    // The checks are independent reads: asked at once (a server database answers them on several connections instead
    // of one round trip after another), their findings reported in this order.
    const [withoutSource, dangling, outOfOrderRows, seqs, coverage, spans, mismatches, counters, times, unreadable, pairing, files] = await Promise.all([
      store.summariesWithoutSource(conversationId), store.danglingContextItems(conversationId), store.contextOutOfOrder(conversationId),
      store.messageSeqStats(conversationId), store.coverage(conversationId), store.partSpansOutOfRange(conversationId),
      store.summaryMetadataMismatches(conversationId), store.counterMismatch(conversationId), store.timestampsOutOfRange(conversationId),
      store.unreadableValues(conversationId), store.itemsForPairing(conversationId, Number.MIN_SAFE_INTEGER), store.largeFiles(conversationId),
    ]);
    for (const summaryId of withoutSource) add("summary_without_source", summaryId, "the summary links to no source message or summary");
    for (const ordinal of dangling) {
      add("dangling_context_item", ordinal, "the context item points to a row that does not exist in this conversation");
    }
    for (const row of outOfOrderRows) findings.push(outOfOrder(conversationId, row));
    if (seqs.count > 0 && (seqs.minSeq !== 1 || seqs.maxSeq !== seqs.count)) {
      add("message_seq_gap", `${seqs.minSeq}..${seqs.maxSeq}`, `${seqs.count} messages for seqs ${seqs.minSeq}..${seqs.maxSeq}: a message is missing`);
    }
    if (coverage.visibleMessages !== coverage.inContext + coverage.summarized) {
      add("message_not_covered", conversationId, `${coverage.visibleMessages} visible messages, ${coverage.inContext} in context, ${coverage.summarized} under leaf summaries`);
    }
    for (const messageId of spans) add("part_span_out_of_range", messageId, "a part's text span lies outside the message content");
    for (const mismatch of mismatches) {
      add("summary_metadata_mismatch", mismatch.summaryId, `depth, seq range, counts or descendants disagree with its ${mismatch.what}`);
    }
    if (counters) add("counter_mismatch", conversationId, counters);
    for (const messageId of times.messageIds) add("timestamp_out_of_range", `message ${messageId}`, OUT_OF_RANGE_DETAIL);
    for (const summaryId of times.summaryIds) add("timestamp_out_of_range", summaryId, OUT_OF_RANGE_DETAIL);
    for (const value of unreadable) {
      add("unreadable_value", value.subject, `its ${value.what} is not JSON of the expected shape: readers ignore it or fail on it`);
    }
    findings.push(...pairingFindings(conversationId, pairing));
    for (const file of files) {
      if (file.keptInDatabase === true || (await this.deps.fileExists(file.storagePath))) continue;
      const where = file.keptInDatabase === false ? " here, and the database keeps no copy of it (the machine that holds it uploads it on its maintain)" : "";
      add("large_file_missing", file.fileId, `stored file ${file.storagePath} is missing${where}`);
    }
    return 12;
  }
}

const OUT_OF_RANGE_DETAIL =
  "a stored time is outside what a JavaScript Date can hold (an older version kept a nanosecond or microsecond " +
  "host timestamp as milliseconds): reading it fails, so assemble falls back and lcm_grep skips the row";

function outOfOrder(conversationId: ConversationId, row: { ordinal: number; start: number; previousEnd: number }): Finding {
  return {
    kind: "context_out_of_order", conversationId, subject: String(row.ordinal),
    detail: `item starts at seq ${row.start}, not after the previous item's end ${row.previousEnd}`,
  };
}

/** Walks context items in order: results must answer a call of the unit they follow, and calls must be answered. */
function pairingFindings(conversationId: ConversationId, items: ItemForPairing[]): Finding[] {
  const findings: Finding[] = [];
  let unit: { ordinal: number; open: Map<string, string> } | null = null;
  const closeUnit = () => {
    for (const id of unit?.open.values() ?? []) {
      findings.push({ kind: "unanswered_tool_call", conversationId, subject: String(unit!.ordinal), detail: `tool call ${id} has no result` });
    }
  };
  for (const item of items) {
    if (item.flags & TOOL_RESULT) {
      const key = item.toolCallId === null ? null : sanitizeToolCallId(item.toolCallId);
      if (unit && key !== null && unit.open.has(key)) unit.open.delete(key);
      else findings.push({ kind: "orphan_tool_result", conversationId, subject: String(item.ordinal), detail: `tool result for ${item.toolCallId ?? "no id"} follows no matching call` });
      continue;
    }
    closeUnit();
    unit = item.flags & TOOL_CALLS ? { ordinal: item.ordinal, open: new Map(item.callIds.map((id) => [sanitizeToolCallId(id), id])) } : null;
  }
  closeUnit();
  return findings;
}

const ADVICE: Record<Finding["kind"], string> = {
  summary_without_source: "The summary cannot be expanded; re-link it from its seq range or remove it from context by hand.",
  dangling_context_item: "Remove the context item; the model never sees it (the assembler skips it).",
  context_out_of_order: "Rebuild the conversation's context order from seq ranges.",
  message_seq_gap: "A message row is missing: restore it from a backup or re-import the session (bootstrap).",
  message_not_covered: "Some messages are neither in context nor summarized: re-add them to context before the first summary that follows them.",
  part_span_out_of_range: "The message's parts disagree with its text: re-import the message from the host transcript.",
  summary_metadata_mismatch: "Recompute the summary's metadata from its sources.",
  counter_mismatch: "Recount the conversation.",
  fts_out_of_sync: "Rebuild the full-text index.",
  large_file_missing: "Restore the file from a backup; describe reports it missing until then.",
  orphan_tool_result: "The assembler drops it; remove it from context to silence this finding.",
  unanswered_tool_call: "The assembler removes the unanswered call; nothing to do unless the turn is still in progress.",
  timestamp_out_of_range: "Run /lcm doctor repair: it scales the time down to milliseconds, keeping the host's value in the message's meta.",
  unreadable_value:
    "An unreadable bootstrap cursor or last compaction is cleared by lcm doctor --repair (bootstrap reads the transcript from its start, " +
    "storing nothing twice). Other values (message or part meta, summary file ids, last reset) need the row restored from a backup or export.",
};
