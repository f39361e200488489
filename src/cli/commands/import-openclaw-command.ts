/**
 * `lcm import openclaw [--agent <id>] [--state-dir <path>] [--apply]`: backfills every session in OpenClaw's state
 * folder (transfer/openclaw-sessions.ts finds them: each agent's database and the earlier JSONL layout), with
 * bootstrap's own reader and dedupe (transfer/openclaw-backfill.ts), so history from before LCM was installed is
 * stored and searchable. Sessions in an agent database are read through OpenClaw's own transcript reader when the
 * command runs as `openclaw lcm`, else from the file, read-only. Without --apply, a dry run: the same reading, what
 * would be stored counted, the database only read; it names what it found and what it could not read, and why. With
 * --apply: resumable (each conversation's bootstrap cursor records how far it was read); run it again to continue or
 * to pick up what was appended since. The database is created when there is none at the path.
 */
import type { Command } from "commander";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { existsSync } from "node:fs";
import { SessionFilter } from "../../sessions/session-filter.js";
import type { TranscriptSource } from "../../ingest/transcript-source.js";
import { LargeFileInterceptor } from "../../large-files/large-file-interceptor.js";
import { LargeFileStorage } from "../../large-files/large-file-storage.js";
import { AgentStoreTranscriptSource } from "../../transfer/openclaw-agent-store.js";
import {
  backfillSession, type BackfillStatus, previewSessionBackfill, type SessionBackfill,
} from "../../transfer/openclaw-backfill.js";
import { type AgentSurvey, type HostSession, type HostSessionSurvey, surveyHostSessions, type UnreadTranscript } from "../../transfer/openclaw-sessions.js";
import { type CliEnvironment, type CliRuntime, type CommandOutput, type CommonOptions, runCommand } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { count } from "../format.js";
import { withCommonOptions } from "./import-command.js";
import { indexNewRows } from "./import-jsonl-command.js";

export interface ImportOpenClawOutput {
  /** True: nothing was written, the counts say what --apply would store. */
  dryRun: boolean;
  stateDir: string;
  databasePath: string;
  databaseCreated: boolean;
  sessions: number;
  importedMessages: number;
  /** How sessions in agent databases were read: "host" (OpenClaw's reader), "agent-database" (the file, read-only), null (none). */
  reader: "host" | "agent-database" | null;
  agents: AgentSurvey[];
  /** Found and not read, with why. */
  unread: UnreadTranscript[];
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
  const hostStateDir = resolve(runtime.environment.env.OPENCLAW_STATE_DIR?.trim() || join(homedir(), ".openclaw"));
  const stateDir = resolve(options.stateDir ?? hostStateDir);
  const agentsDirectory = join(stateDir, "agents");
  if (!existsSync(agentsDirectory)) {
    throw new CliError(EXIT.notFound, `No OpenClaw sessions under ${stateDir} (no agents folder). Pass --state-dir <path> (or set OPENCLAW_STATE_DIR) to OpenClaw's state folder.`);
  }
  if (options.agent !== undefined && !existsSync(join(agentsDirectory, options.agent))) {
    throw new CliError(EXIT.notFound, `OpenClaw has no agent ${options.agent} under ${agentsDirectory}.`);
  }
  const survey = await surveyHostSessions(stateDir, options.agent);
  try {
    const reader = await transcriptReader(runtime.environment, survey, stateDir === hostStateDir);
    const deps = { transcriptSource: reader.source };
    const run = options.apply ? await backfill(runtime, survey.sessions, deps) : await preview(runtime, survey.sessions, deps);
    return report(runtime, options.apply, stateDir, survey, reader.kind, run, Math.round(performance.now() - started));
  } finally {
    for (const store of survey.stores.values()) store.close();
  }
}

/**
 * Who reads the sessions of agent databases: OpenClaw's own reader when the command runs inside OpenClaw, on OpenClaw's
 * own state folder, and its SDK loads; else the database files, read-only.
 */
async function transcriptReader(
  environment: CliEnvironment, survey: HostSessionSurvey, isHostStateDir: boolean,
): Promise<{ kind: ImportOpenClawOutput["reader"]; source: TranscriptSource | undefined }> {
  if (survey.stores.size === 0) return { kind: null, source: undefined };
  const host = environment.hostTranscripts;
  // The host's reader reads the host's own state folder: another one given with --state-dir is read from its files.
  if (host && isHostStateDir && (await host.isAvailable())) return { kind: "host", source: host };
  return { kind: "agent-database", source: new AgentStoreTranscriptSource(survey.stores) };
}

function report(
  runtime: CliRuntime, apply: boolean, stateDir: string, survey: HostSessionSurvey, reader: ImportOpenClawOutput["reader"], run: SessionRun,
  durationMs: number,
): CommandOutput<ImportOpenClawOutput> {
  const { results } = run;
  const { config } = runtime.settings;
  const sessions = survey.sessions.length;
  const byStatus: Record<BackfillStatus, number> = { imported: 0, "up-to-date": 0, ignored: 0, empty: 0, unavailable: 0, failed: 0 };
  for (const result of results) byStatus[result.status]++;
  const importedMessages = results.reduce((sum, result) => sum + result.imported, 0);
  const name = (item: { agentId: string; sessionKey: string | null; sessionId?: string; subject?: string }) =>
    `${item.agentId}/${item.sessionKey ?? item.sessionId ?? item.subject}`;
  const problems = results.filter((result) => result.status === "failed" || result.status === "unavailable")
    .map((result) => `  ${result.status === "failed" ? "failed" : "could not read"} ${name(result)}: ${result.note ?? ""}`);
  const unread = survey.unread.map((item) => `  not read ${item.agentId}/${item.sessionKey ?? item.subject}: ${item.reason}`);
  const found = survey.agents.map((agent) => `  found ${agent.agentId}: ${count(agent.sessions)} sessions` +
    (agent.database ? ` (agent database ${agent.database}, ${!survey.stores.has(agent.agentId) ? "not read: see below" : reader === "host" ? "read with OpenClaw's own reader" : "read-only"})` : "") +
    (agent.sessionsDirectory ? ` (transcript files in ${agent.sessionsDirectory})` : ""));
  const tally = `${count(byStatus["up-to-date"])} already up to date, ${count(byStatus.ignored)} ignored by the session patterns, ${count(byStatus.empty)} empty`;
  const text = apply
    ? [
      `Backfilled ${count(sessions)} OpenClaw sessions from ${stateDir} into ${runtime.databaseLabel}${run.databaseCreated ? " (created)" : ""}: ` +
        `${count(importedMessages)} messages stored in ${count(byStatus.imported)} sessions, ${tally}, in ${count(durationMs)} ms.`,
      ...found, ...problems, ...unread,
      ...(byStatus.failed > 0 ? ["Run it again to retry the failed sessions: what was stored stays, and each session continues where it stopped."] : []),
    ]
    : [
      `Dry run: ${count(sessions)} OpenClaw sessions in ${stateDir}; ${count(importedMessages)} messages would be stored in ` +
        `${count(byStatus.imported)} sessions (${count(results.filter((result) => result.status === "imported" && result.conversationId === null).length)} ` +
        `new conversations) into ${runtime.databaseLabel}${existsSync(config.databasePath) ? "" : " (would be created)"}, ${tally}.`,
      ...found,
      ...results.filter((result) => result.status === "imported")
        .map((result) => `  would import ${name(result)}: ${count(result.imported)} messages` +
          (result.conversationId === null ? " (new conversation)" : ` into conversation ${result.conversationId}`)),
      ...results.filter((result) => result.status === "up-to-date")
        .map((result) => `  skipped ${name(result)}: already stored as conversation ${result.conversationId}`),
      ...problems, ...unread,
      "Nothing was written. Run again with --apply to import.",
    ];
  return {
    data: {
      dryRun: !apply, stateDir, databasePath: runtime.databaseLabel, databaseCreated: run.databaseCreated, sessions,
      importedMessages, reader, agents: survey.agents, unread: survey.unread, byStatus, indexed: run.indexed, durationMs, results,
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
async function backfill(runtime: CliRuntime, sessions: HostSession[], reading: { transcriptSource: TranscriptSource | undefined }): Promise<SessionRun> {
  const { config } = runtime.settings;
  const databaseCreated = runtime.createDatabase();
  const stores = runtime.open("write");
  const logger = runtime.logger;
  const deps = {
    store: stores.store, tokens: runtime.tokens, clock: runtime.clock, logger,
    ...(reading.transcriptSource ? { transcriptSource: reading.transcriptSource } : {}),
    largeFiles: new LargeFileInterceptor({ config, store: stores.store, storage: new LargeFileStorage(config.filesDirectory), tokens: runtime.tokens, clock: runtime.clock, logger }),
    commands: stores.backend.sessions,
    filter: new SessionFilter(config),
  };
  const results = await eachSession(runtime, "Backfilling", sessions, (session) => backfillSession(session, deps));
  return { results, databaseCreated, indexed: await indexNewRows(runtime, stores) };
}

/** The dry run: every session read and counted; the database only read (none yet: every session is new). */
async function preview(runtime: CliRuntime, sessions: HostSession[], reading: { transcriptSource: TranscriptSource | undefined }): Promise<SessionRun> {
  const { config } = runtime.settings;
  const store = runtime.hasDatabase() ? runtime.open("read").store : null;
  const deps = {
    store, tokens: runtime.tokens, clock: runtime.clock, logger: runtime.logger,
    ...(reading.transcriptSource ? { transcriptSource: reading.transcriptSource } : {}),
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

