/**
 * `lcm import openclaw [--agent <id>] [--state-dir <path>] [--apply]`: backfills every session in OpenClaw's state
 * folder (transfer/openclaw-backfill.ts), with bootstrap's own reader and dedupe, so history from before LCM was
 * installed is stored and searchable. Without --apply, a dry run (transfer/openclaw-backfill-preview.ts): sessions
 * are found and read the same way and what would be stored is counted, with the database only read. With --apply:
 * resumable (each conversation's bootstrap cursor records how far it was read); run it again to continue or to pick
 * up what was appended since. The database is created when there is none at the path.
 */
import type { Command } from "commander";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { existsSync } from "node:fs";
import { SessionFilter } from "../../engine/session-filter.js";
import { openClawTranscriptSource } from "../../engine/transcript-source.js";
import { LargeFileInterceptor } from "../../large-files/large-file-interceptor.js";
import { LargeFileStorage } from "../../large-files/large-file-storage.js";
import { inspectDatabaseFile } from "../../db/database-file.js";
import { SqliteSessionStore } from "../../store/sqlite/sqlite-session-store.js";
import { backfillSession, type HostSession, listHostSessions, type BackfillStatus, type SessionBackfill } from "../../transfer/openclaw-backfill.js";
import { previewSessionBackfill } from "../../transfer/openclaw-backfill-preview.js";
import { type CliEnvironment, type CliRuntime, type CommandOutput, type CommonOptions, runCommand } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count } from "../format.js";
import { withCommonOptions } from "./import-command.js";
import { ensureDatabase, indexNewRows } from "./import-jsonl-command.js";

export interface ImportOpenClawOutput {
  /** True: nothing was written, the counts say what --apply would store. */
  dryRun: boolean;
  stateDir: string;
  databasePath: string;
  databaseCreated: boolean;
  sessions: number;
  importedMessages: number;
  byStatus: Record<BackfillStatus, number>;
  indexed: number;
  durationMs: number;
  results: SessionBackfill[];
}

/** Adds `openclaw` to the `lcm import` group (import-command.ts). */
export function defineImportOpenClawCommand(group: Command, environment: CliEnvironment): void {
  withCommonOptions(group.command("openclaw")
    .description("Backfill every OpenClaw session, history from before LCM was installed (a dry run unless --apply; resumable)")
    .option("--agent <id>", "only this agent's sessions")
    .option("--state-dir <path>", "OpenClaw's state folder (default: OPENCLAW_STATE_DIR, else ~/.openclaw)")
    .option("--apply", "write (default: a dry run that reads every session and reports what would be stored)"))
    .action((options: CommonOptions & { agent?: string; stateDir?: string; apply?: boolean }) =>
      runCommand(environment, "import openclaw", options, (runtime) => importOpenClawCommand(runtime, {
        apply: options.apply === true,
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
        ...(options.stateDir !== undefined ? { stateDir: options.stateDir } : {}),
      })));
}

export async function importOpenClawCommand(
  runtime: CliRuntime, options: { apply: boolean; agent?: string; stateDir?: string },
): Promise<CommandOutput<ImportOpenClawOutput>> {
  const started = performance.now();
  const stateDir = resolve(options.stateDir ?? runtime.environment.env.OPENCLAW_STATE_DIR?.trim() ?? join(homedir(), ".openclaw"));
  const agentsDirectory = join(stateDir, "agents");
  if (!existsSync(agentsDirectory)) {
    throw new CliError(EXIT.notFound, `No OpenClaw sessions under ${stateDir} (no agents folder). Pass --state-dir <path> (or set OPENCLAW_STATE_DIR) to OpenClaw's state folder.`);
  }
  if (options.agent !== undefined && !existsSync(join(agentsDirectory, options.agent))) {
    throw new CliError(EXIT.notFound, `OpenClaw has no agent ${options.agent} under ${agentsDirectory}.`);
  }
  const sessions = await listHostSessions(stateDir, options.agent);
  const run = options.apply ? await backfill(runtime, sessions) : await preview(runtime, sessions);
  const { results } = run;
  const { config } = runtime.settings;
  const byStatus: Record<BackfillStatus, number> = { imported: 0, "up-to-date": 0, ignored: 0, empty: 0, unavailable: 0, failed: 0 };
  for (const result of results) byStatus[result.status]++;
  const importedMessages = results.reduce((sum, result) => sum + result.imported, 0);
  const durationMs = Math.round(performance.now() - started);
  const problems = results.filter((result) => result.status === "failed" || result.status === "unavailable")
    .map((result) => `  ${result.status} ${result.agentId}/${result.sessionKey ?? result.sessionId}: ${result.note ?? ""}`);
  const tally = `${count(byStatus["up-to-date"])} already up to date, ${count(byStatus.ignored)} ignored by the session patterns, ${count(byStatus.empty)} empty`;
  const text = options.apply
    ? [
      `Backfilled ${count(sessions.length)} OpenClaw sessions from ${stateDir} into ${config.databasePath}${run.databaseCreated ? " (created)" : ""}: ` +
        `${count(importedMessages)} messages stored in ${count(byStatus.imported)} sessions, ${tally}, in ${count(durationMs)} ms.`,
      ...problems,
      ...(byStatus.failed > 0 ? ["Run it again to retry the failed sessions: what was stored stays, and each session continues where it stopped."] : []),
    ]
    : [
      `Dry run: ${count(sessions.length)} OpenClaw sessions in ${stateDir}; ${count(importedMessages)} messages would be stored in ` +
        `${count(byStatus.imported)} sessions (${count(results.filter((result) => result.status === "imported" && result.conversationId === null).length)} ` +
        `new conversations) into ${config.databasePath}${existsSync(config.databasePath) ? "" : " (would be created)"}, ${tally}.`,
      ...results.filter((result) => result.status === "imported")
        .map((result) => `  would import ${result.agentId}/${result.sessionKey ?? result.sessionId}: ${count(result.imported)} messages` +
          (result.conversationId === null ? " (new conversation)" : ` into conversation ${result.conversationId}`)),
      ...results.filter((result) => result.status === "up-to-date")
        .map((result) => `  skipped ${result.agentId}/${result.sessionKey ?? result.sessionId}: already stored as conversation ${result.conversationId}`),
      ...problems,
      "Nothing was written. Run again with --apply to import.",
    ];
  return {
    data: {
      dryRun: !options.apply, stateDir, databasePath: config.databasePath, databaseCreated: run.databaseCreated, sessions: sessions.length,
      importedMessages, byStatus, indexed: run.indexed, durationMs, results,
    },
    text: text.join("\n"),
    ...(byStatus.failed > 0 ? { exitCode: EXIT.internal } : {}),
  };
}

interface SessionRun {
  results: SessionBackfill[];
  databaseCreated: boolean;
  indexed: number;
}

/** --apply: every session backfilled (the database created when missing), then what was stored indexed. */
async function backfill(runtime: CliRuntime, sessions: HostSession[]): Promise<SessionRun> {
  const { config } = runtime.settings;
  const databaseCreated = ensureDatabase(runtime);
  const stores = runtime.open("write");
  const logger = noteLogger(runtime);
  const deps = {
    store: stores.store, tokens: runtime.tokens, clock: runtime.clock, logger,
    transcriptSource: openClawTranscriptSource(),
    largeFiles: new LargeFileInterceptor({ config, store: stores.store, storage: new LargeFileStorage(config.filesDirectory), tokens: runtime.tokens, clock: runtime.clock, logger }),
    commands: new SqliteSessionStore(stores.database),
    filter: new SessionFilter(config),
  };
  const results = await eachSession(runtime, "Backfilling", sessions, (session) => backfillSession(session, deps));
  return { results, databaseCreated, indexed: await indexNewRows(runtime, stores) };
}

/** The dry run: every session read and counted; the database only read (none yet: every session is new). */
async function preview(runtime: CliRuntime, sessions: HostSession[]): Promise<SessionRun> {
  const { config } = runtime.settings;
  const state = inspectDatabaseFile(config.databasePath);
  const store = state.kind === "missing" || state.kind === "new" ? null : runtime.open("read").store;
  const deps = {
    store, tokens: runtime.tokens, clock: runtime.clock, logger: noteLogger(runtime),
    transcriptSource: openClawTranscriptSource(),
    filter: new SessionFilter(config),
  };
  const results = await eachSession(runtime, "Reading", sessions, (session) => previewSessionBackfill(session, deps));
  return { results, databaseCreated: false, indexed: 0 };
}

async function eachSession(
  runtime: CliRuntime, title: string, sessions: HostSession[], body: (session: HostSession) => Promise<SessionBackfill>,
): Promise<SessionBackfill[]> {
  const progress = runtime.progress(title);
  const results: SessionBackfill[] = [];
  try {
    for (const [index, session] of sessions.entries()) {
      progress.update(index, sessions.length, session.sessionKey ?? session.sessionId);
      results.push(await body(session));
    }
    progress.update(sessions.length, sessions.length, "sessions");
  } finally {
    progress.stop();
  }
  return results;
}

function noteLogger(runtime: CliRuntime) {
  return { debug() {}, info() {}, warn: (message: string) => runtime.note(message), error: (message: string) => runtime.note(message) };
}
