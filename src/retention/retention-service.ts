/**
 * Retention, host-free (specs/018-import-export-retention.md, "Retention"; off by default): what leaves the
 * database is first written to a gzip JSONL archive, then removed in short transactions that re-check what was
 * planned. Three kinds of work, in this order: conversations whose host session is gone are archived whole and
 * deleted; raw messages that summaries cover and the context no longer shows are archived and emptied (summaries
 * stay, the row stays as a stub naming the archive); free pages go back to the file system with incremental vacuum.
 * Every read and every transaction stops once its time slice (runtime/time-slice.ts, 15 ms) has run out, and the event
 * loop runs between slices, so a run never holds the write lock or its thread for long, whatever a row costs; its
 * report and log line state the longest slice. `maintain` calls `runInBackground` (at most once per RUN_INTERVAL_MS
 * per database, a bounded amount of work, started on a later turn of the event loop than the hook's), which the
 * plugin sends to a worker thread of its own (deps.runner, retention/retention-thread.ts), so that a gateway's event
 * loop only starts the run and takes its report; `lcm retention` calls `run` (dry run unless applying).
 */
import { rmdir, rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { Clock, Logger } from "../contracts.js";
import { processShared } from "../runtime/process-shared.js";
import { DEFAULT_SLICE_MS, nextLoopTurn, TimeSlicer } from "../runtime/time-slice.js";
import type { ConversationRecord } from "../records.js";
import type { ArchiveWriter } from "./archive-writer.js";
import { archiveFileName } from "./archive-writer.js";
import {
  bytesOverCap, endedCutoff, messageCutoff, restoredCutoff, type RetentionPolicy, retentionPolicyOf, type RetentionSettings, usedBytes,
} from "./retention-policy.js";
import type { DatabaseSpace, PrunableMessage, RetentionStore } from "../store/retention-store.js";
import type { ConversationStore } from "../store/store.js";
import type { ExportRecord } from "../store/export-format.js";

/** `maintain` starts a run at most this often per database. */
export const RUN_INTERVAL_MS = 10 * 60 * 1_000;
/** Leaf summaries read per page at most when looking for prunable messages (a page also ends with its time slice). */
const SUMMARY_PAGE = 40;
/** Messages per archive file of a live conversation. */
const ARCHIVE_MESSAGES = 2_000;
/**
 * Pages the first incremental vacuum step gives back; later steps are sized from the time the last one took, so that
 * one takes about a time slice (SQLite cannot stop a vacuum step half-way).
 */
const FIRST_VACUUM_STEP_PAGES = 16;
const MAX_VACUUM_STEP_PAGES = 4_096;

export interface RetentionBudget {
  maxMessages: number;
  maxConversations: number;
  /** Wall-clock time after which a run stops at the next step (what is left waits for the next run). */
  maxMs: number;
  maxVacuumPages: number;
}

/** What one call of `maintain` may do. */
export const MAINTAIN_BUDGET: RetentionBudget = { maxMessages: 5_000, maxConversations: 1, maxMs: 2_000, maxVacuumPages: 4_096 };
/** What `lcm retention --apply` does: everything the policy asks for. */
export const UNBOUNDED_BUDGET: RetentionBudget = {
  maxMessages: Number.MAX_SAFE_INTEGER, maxConversations: Number.MAX_SAFE_INTEGER, maxMs: Number.MAX_SAFE_INTEGER, maxVacuumPages: Number.MAX_SAFE_INTEGER,
};

export interface RetentionReport {
  enabled: boolean;
  applied: boolean;
  policy: RetentionPolicy | null;
  /** Bytes of pages in use before and after, and the file's page accounting. */
  usedBytesBefore: number;
  usedBytesAfter: number;
  overCapBytes: number;
  autoVacuum: DatabaseSpace["autoVacuum"];
  /** Conversations archived whole (or that would be). */
  conversations: { conversationId: number; agentId: string; sessionId: string; messages: number; archivePath: string | null }[];
  /** Covered raw messages archived and emptied (or that would be), with the bytes of text and meta they held. */
  messages: { count: number; bytes: number; archivePaths: string[] };
  /** Free pages given back to the file system. */
  vacuumedBytes: number;
  /** Large files deleted with their conversation. */
  removedFiles: number;
  /**
   * Conversations left for a later run because another gateway was compacting or repairing them (PostgreSQL: their
   * lock was held; retention never waits for it). Always empty on SQLite.
   */
  busyConversations: number[];
  /** The budget ran out before the policy was met; the next run continues. */
  stoppedEarly: boolean;
  durationMs: number;
  /**
   * The longest stretch the run held the event loop of the thread it ran on (`thread`), in ms (0.1 ms steps): its
   * work between two turns of the event loop it let happen (runtime/time-slice.ts TimeSlicer.longestSlice; waits for
   * a file or a lock end a slice, and the callbacks that write archive files are counted in none). Wall-clock time:
   * on a loaded machine it includes time the thread waited for a core or a blocking system call, which
   * `longestSliceCpuMs` (that thread's CPU time in that slice; null where Node cannot tell) does not.
   */
  longestSliceMs: number;
  longestSliceCpuMs: number | null;
  /**
   * Where the run's work ran: "worker", a thread of its own (retention/retention-thread.ts; what maintain starts in
   * a gateway), whose slices never hold the gateway's event loop; or "calling", the caller's thread (the CLI, tests,
   * or where no worker thread could start), whose slices are the event-loop blocks the run caused.
   */
  thread: "calling" | "worker";
  /**
   * For a run on a worker: the longest delay of the calling thread's event loop while the run went (perf_hooks
   * monitorEventLoopDelay, 1 ms resolution), whatever held it (the host's own work included); null otherwise.
   */
  callerLoopMaxDelayMs: number | null;
  /**
   * For a run on a worker: the longest stretch of the run's own work on the calling thread (starting the worker,
   * handling one of its messages), the event-loop block the run caused there; null otherwise.
   */
  callerBusyMs: number | null;
}

export interface RetentionServiceDeps {
  store: RetentionStore;
  conversations: Pick<ConversationStore, "getConversation">;
  /** One conversation as export records (transfer/jsonl-export.ts exportConversationRecords). */
  exportConversation: (conversationId: number) => AsyncIterable<ExportRecord>;
  archives: ArchiveWriter;
  config: RetentionSettings & { databasePath: string };
  clock: Clock;
  logger: Logger;
  /** How long each read or transaction may run before the event loop gets a turn (default DEFAULT_SLICE_MS; 0: one row each). */
  sliceMs?: number;
  /**
   * Runs the background run (apply, within `budget`) somewhere else: plugin.ts passes retention-thread.ts's worker
   * thread for a database file. Default: `run` on the calling thread.
   */
  runner?: (budget: RetentionBudget) => Promise<RetentionReport>;
}

/** Per database: when `maintain` last started a run, and whether one is running (engines are rebuilt every turn). */
const schedules = processShared("retention-schedules.v1", () => new Map<string, { lastStartedAt: number; running: boolean }>());

export class RetentionService {
  constructor(private readonly deps: RetentionServiceDeps) {}

  get policy(): RetentionPolicy | null {
    return retentionPolicyOf(this.deps.config);
  }

  /**
   * From `maintain`: starts a bounded run in the background when retention is on, none is running for this database
   * and the last started RUN_INTERVAL_MS ago or more. Contract: never throws, never awaits the run; failures are
   * logged and the next interval tries again (every step re-checks what it planned, so a half-done run is safe).
   */
  runInBackground(budget: RetentionBudget = MAINTAIN_BUDGET): Promise<RetentionReport | null> | null {
    if (!this.policy) return null;
    const now = this.deps.clock.now();
    const schedule = schedules.get(this.deps.config.databasePath) ?? { lastStartedAt: -Infinity, running: false };
    schedules.set(this.deps.config.databasePath, schedule);
    if (schedule.running || now - schedule.lastStartedAt < RUN_INTERVAL_MS) return null;
    schedule.running = true;
    schedule.lastStartedAt = now;
    // Nothing of the run happens inside the caller's hook: it starts on a later turn of the event loop.
    const runApplied = this.deps.runner ?? ((within: RetentionBudget) => this.run({ apply: true, budget: within }));
    return nextLoopTurn().then(() => runApplied(budget)).then((report) => {
      if (report.conversations.length > 0 || report.messages.count > 0 || report.vacuumedBytes > 0 || report.busyConversations.length > 0) {
        this.deps.logger.info(`retention: ${describeReport(report)}`);
      }
      return report;
    }, (error: unknown) => {
      this.deps.logger.warn(`retention: run failed (${error instanceof Error ? error.message : String(error)}); nothing half-done is visible and the next run continues.`);
      return null;
    }).finally(() => {
      schedule.running = false;
    });
  }

  /** Applies the policy within `budget`, or (dry run) reports what it would do without writing anything. */
  async run(options: { apply: boolean; budget?: RetentionBudget }): Promise<RetentionReport> {
    const started = performance.now();
    const slicer = new TimeSlicer(this.deps.sliceMs ?? DEFAULT_SLICE_MS);
    const budget = options.budget ?? UNBOUNDED_BUDGET;
    const { store } = this.deps;
    const policy = this.policy;
    const before = await store.space();
    const report: RetentionReport = {
      enabled: policy !== null, applied: options.apply, policy, usedBytesBefore: usedBytes(before), usedBytesAfter: usedBytes(before),
      overCapBytes: policy ? bytesOverCap(policy, before) : 0, autoVacuum: before.autoVacuum, conversations: [],
      messages: { count: 0, bytes: 0, archivePaths: [] }, vacuumedBytes: 0, removedFiles: 0, busyConversations: [], stoppedEarly: false, durationMs: 0,
      longestSliceMs: 0, longestSliceCpuMs: null, thread: "calling", callerLoopMaxDelayMs: null, callerBusyMs: null,
    };
    if (!policy) return report;
    const outOfTime = () => performance.now() - started > budget.maxMs;
    if (options.apply) {
      for (const archive of await store.unfinishedDeletions()) {
        if (!(await this.deleteConversation(archive.archiveId, slicer, outOfTime, report, archive.conversationId))) break;
      }
    }
    await slicer.checkpoint();
    await this.archiveEndedConversations(policy, options.apply, budget, slicer, outOfTime, report);
    await slicer.checkpoint();
    await this.pruneCoveredMessages(policy, options.apply, budget, slicer, outOfTime, report);
    if (options.apply) await this.vacuum(budget, slicer, outOfTime, report);
    report.usedBytesAfter = options.apply ? usedBytes(await store.space()) : Math.max(0, report.usedBytesBefore - report.messages.bytes);
    report.stoppedEarly ||= outOfTime();
    report.durationMs = Math.round(performance.now() - started);
    const longest = slicer.longestSlice();
    report.longestSliceMs = roundTenth(longest.wallMs);
    report.longestSliceCpuMs = longest.cpuMs === null ? null : roundTenth(longest.cpuMs);
    return report;
  }

  private async archiveEndedConversations(
    policy: RetentionPolicy, apply: boolean, budget: RetentionBudget, slicer: TimeSlicer, outOfTime: () => boolean, report: RetentionReport,
  ): Promise<void> {
    const { store, clock } = this.deps;
    const overCap = bytesOverCap(policy, await store.space()) > 0;
    const cutoff = endedCutoff(policy, clock.now(), overCap);
    if (cutoff === null) return;
    const candidates = await store.endedConversations(cutoff, Math.min(budget.maxConversations, 1_000), restoredCutoff(policy, clock.now()));
    for (const candidate of candidates) {
      if (outOfTime()) {
        report.stoppedEarly = true;
        return;
      }
      const entry = { conversationId: candidate.conversationId, agentId: candidate.agentId, sessionId: candidate.sessionId, messages: candidate.messageCount, archivePath: null as string | null };
      report.conversations.push(entry);
      if (!apply) continue;
      const now = clock.now();
      const earlier = await store.archivePathsOf(candidate.conversationId);
      const written = await slicer.waitFor(() => this.deps.archives.write(archiveFileName("conversation", candidate.conversationId, now), this.withHeader(
        { kind: "conversation", conversationId: candidate.conversationId, agentId: candidate.agentId, sessionId: candidate.sessionId,
          sessionKey: candidate.sessionKey, createdAt: now, reason: overCap ? "size" : "ended-session", earlierArchives: earlier },
        this.deps.exportConversation(candidate.conversationId),
      )));
      const archiveId = await store.beginConversationDeletion({
        kind: "conversation", path: written.path, createdAt: now, conversationId: candidate.conversationId,
        reason: overCap ? "size" : "ended-session", messageCount: candidate.messageCount, seqStart: null, seqEnd: null, byteSize: written.bytes,
      }, candidate.updatedAt);
      if (archiveId === null || archiveId === "busy") {
        // The session came back while the archive was written, or another gateway holds the conversation: it stays,
        // and so does nothing else (a later run writes a new archive if it still goes).
        await slicer.waitFor(() => rm(written.path, { force: true }));
        report.conversations.pop();
        if (archiveId === "busy") markBusy(report, candidate.conversationId);
        continue;
      }
      entry.archivePath = written.path;
      await slicer.checkpoint();
      if (!(await this.deleteConversation(archiveId, slicer, outOfTime, report, candidate.conversationId))) return;
    }
  }

  /** Deletes a conversation's rows a time slice at a time; false when the run's budget stopped it (the next run resumes). */
  private async deleteConversation(
    archiveId: number, slicer: TimeSlicer, outOfTime: () => boolean, report: RetentionReport, conversationId?: number,
  ): Promise<boolean> {
    const directories = new Set<string>();
    for (;;) {
      const step = await this.deps.store.deleteConversationStep(archiveId, slicer);
      if (step.busy) {
        // Another gateway holds it: the conversation stays taken out of use, and the next run resumes the deletion.
        if (conversationId !== undefined) markBusy(report, conversationId);
        return true;
      }
      for (const path of step.removedFilePaths) {
        // The archive holds the file's bytes (base64); its row is gone, so nothing references the file any more.
        await slicer.waitFor(() => rm(path, { force: true }));
        directories.add(dirname(path));
        report.removedFiles++;
      }
      if (step.finished) break;
      await slicer.yield();
      if (outOfTime()) {
        report.stoppedEarly = true;
        return false;
      }
    }
    for (const directory of directories) {
      // Only an empty directory goes; a file written there meanwhile keeps it (the orphan sweep decides later).
      await slicer.waitFor(() => rmdir(directory)).catch(() => undefined);
    }
    return true;
  }

  private async pruneCoveredMessages(
    policy: RetentionPolicy, apply: boolean, budget: RetentionBudget, slicer: TimeSlicer, outOfTime: () => boolean, report: RetentionReport,
  ): Promise<void> {
    const { store, clock } = this.deps;
    let overBy = bytesOverCap(policy, await store.space());
    let after = 0;
    const pending = new Map<number, PrunableMessage[]>();
    for (;;) {
      const cutoff = messageCutoff(policy, clock.now(), overBy > 0);
      if (cutoff === null || report.messages.count >= budget.maxMessages) break;
      if (outOfTime()) {
        report.stoppedEarly = true;
        break;
      }
      const page = await store.prunableMessages(cutoff, after, SUMMARY_PAGE, slicer, restoredCutoff(policy, clock.now()));
      for (const message of page.messages) {
        if (report.messages.count >= budget.maxMessages) break;
        report.messages.count++;
        const bytes = message.content.length + message.meta.length;
        report.messages.bytes += bytes;
        if (!apply) {
          overBy -= bytes;
          continue;
        }
        const list = pending.get(message.conversationId) ?? [];
        list.push(message);
        pending.set(message.conversationId, list);
        if (list.length >= ARCHIVE_MESSAGES) {
          await this.archiveMessages(message.conversationId, list, cutoff, overBy > 0 ? "size" : "age", slicer, report, restoredCutoff(policy, clock.now()));
          pending.delete(message.conversationId);
          overBy = bytesOverCap(policy, await store.space());
        }
      }
      if (page.nextSummaryRowId === null) break;
      after = page.nextSummaryRowId;
      // A dry run over the cap stops once it has found enough; a run that applies re-measures after each archive.
      if (!apply && policy.maxAgeMs === null && overBy <= 0) break;
      await slicer.yield();
    }
    for (const [conversationId, list] of pending) {
      await this.archiveMessages(conversationId, list, clock.now(), overBy > 0 ? "size" : "age", slicer, report, restoredCutoff(policy, clock.now()));
    }
  }

  private async archiveMessages(
    conversationId: number, messages: PrunableMessage[], createdBefore: number, reason: "age" | "size", slicer: TimeSlicer, report: RetentionReport,
    restoredBefore: number,
  ): Promise<void> {
    const conversation = await this.deps.conversations.getConversation(conversationId);
    if (!conversation) return;
    const now = this.deps.clock.now();
    const seqs = messages.map((message) => message.seq);
    const written = await slicer.waitFor(() => this.deps.archives.write(
      archiveFileName("messages", conversationId, now), this.withHeader(headerOf(conversation, now, reason), messageRecords(messages)),
    ));
    report.messages.archivePaths.push(written.path);
    const archive = {
      kind: "messages" as const, path: written.path, createdAt: now, conversationId, reason, messageCount: 0,
      seqStart: Math.min(...seqs), seqEnd: Math.max(...seqs), byteSize: written.bytes,
    };
    const ids = messages.map((message) => message.messageId);
    let pruned = 0;
    // One transaction per time slice; each records the archive with the messages it emptied.
    for (let index = 0; index < ids.length;) {
      await slicer.checkpoint();
      const step = await this.deps.store.pruneMessages(archive, ids.slice(index), createdBefore, slicer, restoredBefore);
      index += step.handled;
      pruned += step.pruned;
      if (step.busy) {
        // Another gateway holds the conversation: what is left of the list stays for a later run.
        markBusy(report, conversationId);
        break;
      }
      await slicer.yield();
    }
    // A message shown again between reading and pruning stays (its copy in the archive is harmless).
    report.messages.count -= messages.length - pruned;
  }

  /** Gives free pages back in steps sized to take about one time slice each (from what the last step took). */
  private async vacuum(budget: RetentionBudget, slicer: TimeSlicer, outOfTime: () => boolean, report: RetentionReport): Promise<void> {
    const { store } = this.deps;
    const space = await store.space();
    if (space.autoVacuum !== "incremental") return;
    let pages = 0;
    let stepPages = FIRST_VACUUM_STEP_PAGES;
    while (pages < budget.maxVacuumPages && (await store.space()).freeBytes > 0 && !outOfTime()) {
      await slicer.yield();
      const freed = await store.incrementalVacuum(Math.min(stepPages, budget.maxVacuumPages - pages), slicer);
      if (freed <= 0) break;
      pages += freed;
      // The slice is the step (a wait for the lock ended the one before and started it).
      const msPerPage = Math.max(slicer.elapsed(), 0.05) / freed;
      stepPages = Math.max(1, Math.min(MAX_VACUUM_STEP_PAGES, Math.floor(slicer.sliceMs / msPerPage)));
    }
    report.vacuumedBytes = pages * space.vacuumUnitBytes;
  }

  private async *withHeader(header: Record<string, unknown>, records: AsyncIterable<object>): AsyncGenerator<object> {
    yield { type: "retentionArchive", format: "lcm-retention", version: 1, databasePath: this.deps.config.databasePath, ...header };
    yield* records;
  }
}

function markBusy(report: RetentionReport, conversationId: number): void {
  if (!report.busyConversations.includes(conversationId)) report.busyConversations.push(conversationId);
}

/** A report's milliseconds, in 0.1 ms steps. */
export function roundTenth(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function headerOf(conversation: ConversationRecord, now: number, reason: string): Record<string, unknown> {
  return {
    kind: "messages", conversationId: conversation.conversationId, agentId: conversation.agentId, sessionId: conversation.sessionId,
    sessionKey: conversation.sessionKey, createdAt: now, reason,
  };
}

/** The messages as export-format message records, with where each was in this database and which summary covers it. */
async function* messageRecords(messages: PrunableMessage[]): AsyncGenerator<object> {
  for (const message of messages) {
    yield {
      type: "message", seq: message.seq, role: message.role, content: message.content, tokenCount: message.tokenCount,
      createdAt: message.createdAt, identityKey: message.identityKey, flags: message.flags, meta: message.meta, parts: message.parts,
      messageId: message.messageId, summaryId: message.summaryId,
    };
  }
  yield { type: "end", messages: messages.length };
}

/** One line for logs and the CLI. */
export function describeReport(report: RetentionReport): string {
  if (!report.enabled) return "off (set retentionMaxDatabaseMb, retentionMaxAgeDays or retentionPruneEndedSessions to turn it on)";
  const verb = report.applied ? "archived" : "would archive";
  const parts = [
    `${verb} ${report.conversations.length} ended conversation(s)`,
    `${verb} ${report.messages.count} covered message(s) (${(report.messages.bytes / 1_048_576).toFixed(1)} MB of text)`,
  ];
  if (report.applied) parts.push(`gave back ${(report.vacuumedBytes / 1_048_576).toFixed(1)} MB`);
  if (report.busyConversations.length > 0) {
    parts.push(`skipped ${report.busyConversations.length} conversation(s) another gateway was compacting or repairing (the next run takes them)`);
  }
  if (report.stoppedEarly) parts.push("stopped at its budget (the next run continues)");
  const cpu = report.longestSliceCpuMs === null ? "" : ` (${report.longestSliceCpuMs.toFixed(1)} ms CPU)`;
  const where = report.thread === "worker" ? " on a worker thread" : "";
  parts.push(`took ${(report.durationMs / 1_000).toFixed(1)} s${where}, longest slice ${report.longestSliceMs.toFixed(1)} ms${cpu}`);
  if (report.callerLoopMaxDelayMs !== null) {
    const own = report.callerBusyMs === null ? "" : `, of which the run's own work on it at most ${report.callerBusyMs.toFixed(1)} ms`;
    parts.push(`the gateway's event loop meanwhile: longest delay ${report.callerLoopMaxDelayMs.toFixed(1)} ms${own}`);
  }
  return parts.join("; ");
}
