/**
 * Restores an LCM export (store/export-format.ts) into a store, exactly: `lcm import jsonl`. Host-free. The file may be a
 * plain export or a retention archive of a whole conversation (gzip; its header line is skipped). Three steps:
 * 1. every record checked (export-validation.ts: shape, values, order, references, constraints, counts) and each
 *    block decided against the database: a bad file or a conflict is refused before anything is written;
 * 2. the blocks written (export-block-writer.ts), in chunks of a few hundred rows with the event loop running between
 *    them, each conversation archived as IMPORTING_REASON meanwhile, so the gateway never serves it half-made;
 * 3. each written conversation checked as `lcm doctor` checks one; then all of them published in one transaction
 *    (their own archive state, `restored_at` set). If a check fails, everything this import wrote is removed: nothing
 *    changed, and the error says what was wrong.
 * A dry run (`planExportFile`) is step 1 alone. Idempotent and resumable: a block whose conversation (agent, session,
 * creation time) is stored already is skipped and reported; an import killed during step 2 resumes where it stopped.
 */
import { createReadStream } from "node:fs";
import { access, open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { createGunzip } from "node:zlib";
import type { Clock } from "../contracts.js";
import { describeError, LcmError } from "../errors.js";
import type { Finding } from "../integrity/findings.js";
import { IntegrityChecker } from "../integrity/integrity-checker.js";
import { readLines } from "../runtime/line-reader.js";
import type { ExportRecord } from "../store/export-format.js";
import type { ExportStore } from "../store/export-store.js";
import type { ImportStore } from "../store/import-store.js";
import type { IntegrityStore } from "../store/integrity-store.js";
import { BlockWriter } from "./export-block-writer.js";
import { type BlockPlan, planBlock, validateExportLines } from "./export-validation.js";

/** The stores an import works on, all on the target: what it reads to decide, writes, and checks. */
export interface JsonlImportStores {
  exports: ExportStore;
  imports: ImportStore;
  integrity: IntegrityStore;
}

export interface JsonlImportOptions {
  /** Where large files are stored (LcmConfig.filesDirectory). */
  filesDirectory: string;
  /** The time written as each conversation's `restored_at`. */
  clock: Clock;
  /** Called as records are checked (`phase` "check") and written ("write"). */
  onProgress?: (phase: "check" | "write", done: number, total: number) => void;
}

export interface ImportedBlock {
  agentId: string;
  sessionId: string;
  sessionKey: string | null;
  createdAt: number;
  /**
   * imported: written now; resumed: an interrupted import finished now; skipped: already stored (nothing written).
   * In a dry run (`planExportFile`), what would happen.
   */
  outcome: "imported" | "resumed" | "skipped";
  /** The conversation it is stored as; null in a dry run for a block not stored yet. */
  conversationId: number | null;
  messages: number;
  summaries: number;
  contextItems: number;
  largeFiles: number;
  reason: string | null;
}

export interface JsonlImportResult {
  path: string;
  records: number;
  conversations: ImportedBlock[];
}

/** Findings a restored conversation may carry: tolerated by the engine, or said by the file itself (a file exported without content). */
const TOLERATED_FINDINGS: ReadonlySet<Finding["kind"]> = new Set(["orphan_tool_result", "unanswered_tool_call", "large_file_missing"]);

/**
 * The first step alone, for a dry run: checks the whole file and decides each block against the database exactly as
 * `importExportFile` does, and reports each block's outcome without writing anything.
 */
export async function planExportFile(
  exports: ExportStore, path: string, options: Pick<JsonlImportOptions, "onProgress">,
): Promise<JsonlImportResult> {
  const { absolute, records, plans } = await checkExportFile(exports, path, options);
  const conversations = plans.map((plan) => {
    switch (plan.decision.kind) {
      case "skip": return blockResult(plan, "skipped", plan.decision.conversationId, plan.decision.reason);
      case "resume": return blockResult(plan, "resumed", plan.decision.conversationId, null);
      default: return blockResult(plan, "imported", null, null);
    }
  });
  return { path: absolute, records, conversations };
}

export async function importExportFile(stores: JsonlImportStores, path: string, options: JsonlImportOptions): Promise<JsonlImportResult> {
  const { absolute, records, plans } = await checkExportFile(stores.exports, path, options);
  const writer = new BlockWriter(stores.imports, options.filesDirectory);
  const written: { plan: BlockPlan; conversationId: number }[] = [];
  try {
    let blockIndex = -1;
    let done = 0;
    let current: { plan: BlockPlan; conversationId: number } | null = null;
    for await (const record of exportRecords(absolute)) {
      done++;
      if (done % 1_000 === 0) options.onProgress?.("write", done, records);
      if (record.type === "conversation") {
        const plan = plans[++blockIndex]!;
        if (plan.decision.kind === "skip") continue;
        current = { plan, conversationId: plan.decision.kind === "resume" ? plan.decision.conversationId : await writer.open(record) };
        written.push(current);
      } else if (current && record.type === "end") {
        await writer.flush(current.conversationId);
        current = null;
      } else if (current && record.type === "largeFile") {
        await writer.writeLargeFile(current.conversationId, record);
      } else if (current) {
        await writer.add(current.conversationId, record);
      }
    }
    await checkWritten(stores.integrity, written, options.clock);
    await publish(stores.imports, written, options.clock.now());
  } catch (error) {
    // A check (or a write the checks did not foresee) failed: nothing of this import stays.
    await writer.remove(written.map((block) => block.conversationId));
    throw error instanceof ImportRefused ? error : new LcmError(
      "storage", `Nothing was imported from ${absolute}: writing it failed (${describeError(error)}); what was written is removed. ` +
        "Fix the cause (disk space, permissions) and import it again.",
    );
  }
  options.onProgress?.("write", records, records);
  const results = plans.map((plan) => {
    if (plan.decision.kind === "skip") return blockResult(plan, "skipped", plan.decision.conversationId, plan.decision.reason);
    const block = written.find((entry) => entry.plan === plan)!;
    return blockResult(plan, plan.decision.kind === "resume" ? "resumed" : "imported", block.conversationId, null);
  });
  return { path: absolute, records, conversations: results };
}

/** The first step: every record checked, every block decided; throws (nothing written) when a block is refused. */
async function checkExportFile(
  exports: ExportStore, path: string, options: Pick<JsonlImportOptions, "onProgress">,
): Promise<{ absolute: string; records: number; plans: BlockPlan[] }> {
  const absolute = resolve(path);
  const validation = await validateExportLines(exportLines(absolute), absolute, (done) => options.onProgress?.("check", done, 0));
  const plans: BlockPlan[] = [];
  for (const block of validation.blocks) plans.push(await planBlock(exports, block));
  const refused = plans.filter((plan): plan is BlockPlan & { decision: { kind: "refuse"; reason: string } } => plan.decision.kind === "refuse");
  if (refused.length > 0) {
    throw new LcmError(
      "invalid_input",
      `Nothing was imported from ${absolute}: ${refused.map((plan) => plan.decision.reason).join(" ")}`,
    );
  }
  return { absolute, records: validation.records, plans };
}

/** Each written conversation checked as `lcm doctor --conversation` checks it; throws what a restore must not keep. */
async function checkWritten(integrity: IntegrityStore, written: { plan: BlockPlan; conversationId: number }[], clock: Clock): Promise<void> {
  const checker = new IntegrityChecker({
    store: integrity, clock, fileExists: (file) => access(file).then(() => true, () => false),
  });
  for (const { plan, conversationId } of written) {
    const report = await checker.check({ conversationId, includeIndexes: false });
    const broken = report.findings.filter((finding) => !TOLERATED_FINDINGS.has(finding.kind));
    if (broken.length === 0) continue;
    const conversation = plan.conversation;
    throw new ImportRefused(
      `Nothing was imported: conversation ${conversation.agentId}/${conversation.sessionId} (line ${plan.line}) breaks what LCM keeps true ` +
        `(${broken.slice(0, 5).map((finding) => `${finding.kind} ${finding.subject}: ${finding.detail}`).join("; ")}` +
        `${broken.length > 5 ? `; and ${broken.length - 5} more` : ""}). If the database it came from says the same (lcm doctor), repair it ` +
        "there (lcm doctor --repair) and export again.",
    );
  }
}

/** Makes every written conversation what the file says (its archive state), restored now; one transaction. */
async function publish(imports: ImportStore, written: { plan: BlockPlan; conversationId: number }[], now: number): Promise<void> {
  const refusal = await imports.publish(written.map(({ plan, conversationId }) => ({
    conversationId, expected: { messages: plan.end.messages, summaries: plan.end.summaries, contextItems: plan.end.contextItems },
    archivedAt: plan.conversation.archivedAt, archiveReason: plan.conversation.archiveReason,
  })), now);
  if (refusal === null) return;
  const { end, conversation } = written[refusal.index]!.plan;
  if (refusal.kind === "counts") {
    const { stored } = refusal;
    throw new ImportRefused(
      `Nothing was imported: conversation ${conversation.agentId}/${conversation.sessionId} holds ${stored.messages} messages, ` +
        `${stored.summaries} summaries and ${stored.contextItems} context items once written, where the file has ${end.messages}, ` +
        `${end.summaries} and ${end.contextItems}.`,
    );
  }
  throw new ImportRefused(
    `Nothing was imported: another live conversation of agent ${conversation.agentId}, session ${conversation.sessionId} ` +
      `appeared while the file was imported (${refusal.detail}); import it again.`,
  );
}

class ImportRefused extends LcmError {
  constructor(message: string) {
    super("invalid_input", message);
  }
}

function blockResult(plan: BlockPlan, outcome: ImportedBlock["outcome"], conversationId: number | null, reason: string | null): ImportedBlock {
  const conversation = plan.conversation;
  return {
    agentId: conversation.agentId, sessionId: conversation.sessionId, sessionKey: conversation.sessionKey, createdAt: conversation.createdAt,
    outcome, conversationId, messages: plan.end.messages, summaries: plan.end.summaries, contextItems: plan.end.contextItems,
    largeFiles: plan.end.largeFiles, reason,
  };
}

/** The lines of an export (gunzipped when it is gzip: a retention archive), split only at line feeds. */
async function* exportLines(path: string): AsyncGenerator<string> {
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new LcmError("invalid_input", `${path} is not a file; pass the JSONL file \`lcm export --format jsonl\` wrote.`);
  } catch (error) {
    if (error instanceof LcmError) throw error;
    throw new LcmError("invalid_input", `Cannot read ${path}: ${describeError(error)}. Pass the JSONL file \`lcm export --format jsonl\` wrote.`);
  }
  const stream = createReadStream(path);
  const gzip = await isGzip(path);
  const input = gzip ? stream.pipe(createGunzip()) : stream;
  try {
    for await (const line of readLines(input)) yield line.text;
  } catch (error) {
    if (error instanceof LcmError) throw error;
    throw new LcmError("invalid_input", `Cannot read ${path}${gzip ? " as gzip" : ""}: ${describeError(error)}. Nothing was imported.`);
  } finally {
    stream.destroy();
    if (input !== stream) input.destroy();
  }
}

/** The records of a checked file, in order (a retention archive's header left out). */
async function* exportRecords(path: string): AsyncGenerator<ExportRecord> {
  for await (const text of exportLines(path)) {
    if (text.trim() === "") continue;
    const record = JSON.parse(text) as ExportRecord | { type: "retentionArchive" };
    if (record.type !== "retentionArchive") yield record;
  }
}

async function isGzip(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === 2 && buffer[0] === 0x1f && buffer[1] === 0x8b;
  } finally {
    await handle.close();
  }
}
