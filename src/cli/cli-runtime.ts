/**
 * What every `lcm` command runs inside: its settings resolved (cli-config.ts), the database opened as the command
 * needs it and closed afterwards, stores built on that connection, output written (human text, or one JSON document
 * with --json), errors turned into a message on stderr and an exit code (exit-codes.ts), and a progress bar for the
 * long ones. Commands themselves only call services and say what to print.
 */
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import type { Clock, CompletionModel, Logger, TokenEstimator } from "../contracts.js";
import { systemClock } from "../contracts.js";
import type { ProbedTranscriptSource } from "../ingest/transcript-source.js";
import { describeError } from "../errors.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import { countedIntegrityChecker } from "../services/integrity-service.js";
import { inspectDatabaseFile } from "../sqlite/database-file.js";
import { assertNotDatabaseFile } from "../sqlite/database-target.js";
import { MIGRATIONS } from "../sqlite/migrations.js";
import { redactUrl } from "../postgres/pg-database.js";
import { openSqliteBackend } from "../sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../store/backend.js";
import { DefaultTokenEstimator } from "../tokens/default-token-estimator.js";
import { type CliConfig, resolveCliConfig } from "./cli-config.js";
import type { AccessMode } from "../sqlite/command-connection.js";
import { CliError, EXIT, type ExitCode, exitCodeOf } from "./exit-codes.js";
import { openPostgresForCli } from "./postgres-target.js";
import { LargeFileStorage } from "../large-files/large-file-storage.js";
import { type Progress, progressBar } from "./progress.js";

/** Where the CLI runs: the standalone bin or `openclaw lcm`. */
export interface CliEnvironment {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  /** The OpenClaw config the host loaded (`openclaw lcm`); the standalone bin reads openclaw.json itself. */
  hostConfig?: unknown;
  /**
   * Under `openclaw lcm`: the host's own transcript reader (plugin-sdk session-transcript-runtime), which `import
   * openclaw` uses for sessions in OpenClaw's store. Absent in the standalone bin, which reads that store's file.
   */
  hostTranscripts?: ProbedTranscriptSource;
  /** A model for `compact` and `expand --prompt` (the host's plugin model under `openclaw lcm`). */
  model?: CompletionModel | undefined;
  clock?: Clock;
  setExitCode(code: number): void;
}

/** The options every command takes. */
export interface CommonOptions {
  db?: string;
  /** A PostgreSQL URL (`--database-url`): the command's database is PostgreSQL. */
  databaseUrl?: string;
  config?: string;
  json?: boolean;
}

export interface CommandOutput<T> {
  /** What --json prints (validated against the command's schema in the tests). */
  data: T;
  /** What a person sees. */
  text: string;
  exitCode?: ExitCode;
}

/** The stores of one command, all on its one connection (the backend's, under the names the commands use). */
export interface CliStores {
  backend: LcmBackend;
  readOnly: boolean;
  /** Why a command that prefers to write reads only (read-only file, another writer's lock), or null. */
  readOnlyNotice: string | null;
  store: LcmBackend["store"];
  compactionStore: LcmBackend["compaction"];
  retrievalStore: LcmBackend["retrieval"];
  grantStore: LcmBackend["grants"];
  statusStore: LcmBackend["status"];
  integrityStore: LcmBackend["integrity"];
  operator: LcmBackend["operator"];
  integrity: IntegrityChecker;
}

export class CliRuntime {
  readonly tokens: TokenEstimator = new DefaultTokenEstimator();
  readonly clock: Clock;
  private opened: CliStores | null = null;
  private readonly scratches: LcmBackend[] = [];
  private cliConfig: CliConfig | null = null;

  constructor(readonly environment: CliEnvironment, readonly options: CommonOptions) {
    this.clock = environment.clock ?? systemClock;
  }

  get settings(): CliConfig {
    this.cliConfig ??= resolveCliConfig({
      db: this.options.db, databaseUrl: this.options.databaseUrl, configPath: this.options.config, env: this.environment.env, hostConfig: this.environment.hostConfig,
      warn: (message) => this.note(`warning: ${message}`),
    });
    return this.cliConfig;
  }

  /** The database as messages name it: the file's path, or the PostgreSQL URL without its password. */
  get databaseLabel(): string {
    const { databaseUrl, databasePath } = this.settings.config;
    return databaseUrl ? redactUrl(databaseUrl) : databasePath;
  }

  /** Opens the database (once per command) the way the command needs it. */
  open(mode: AccessMode): CliStores {
    if (this.opened) return this.opened;
    const { config, databasePathSource } = this.settings;
    // PostgreSQL: the server arbitrates writers (no file lock to read around), so a command that may write opens it
    // writable; one that only reads opens it read-only at the server, as SQLite opens the file read-only.
    const backend = config.databaseUrl
      ? openPostgresForCli(config.databaseUrl, "--database-url", {
        poolSize: 2, applicationName: "lcm-cli", readOnly: isReadOnly(mode), files: new LargeFileStorage(config.filesDirectory),
      })
      : openSqliteBackend(config.databasePath, { command: mode, pathSource: databasePathSource });
    if (backend.readOnlyNotice) this.note(backend.readOnlyNotice);
    this.opened = {
      backend, readOnly: !backend.writable, readOnlyNotice: backend.readOnlyNotice,
      store: backend.store,
      compactionStore: backend.compaction,
      retrievalStore: backend.retrieval,
      grantStore: backend.grants,
      statusStore: backend.status,
      integrityStore: backend.integrity,
      operator: backend.operator,
      integrity: countedIntegrityChecker(backend.integrity, this.clock),
    };
    return this.opened;
  }

  /**
   * Whether an LCM database (or another file) is at the configured path: a missing or empty file is none. A PostgreSQL
   * database is always there to ask (its schema is made on the first statement).
   */
  hasDatabase(): boolean {
    if (this.settings.config.databaseUrl) return true;
    const state = inspectDatabaseFile(this.settings.config.databasePath);
    return state.kind !== "missing" && state.kind !== "new";
  }

  /**
   * Whether the configured path holds an LCM database older than the schema that records imports from other stores:
   * a command that only reads cannot see its earlier imports (reading it needs the upgrade a write does).
   */
  predatesImports(): boolean {
    if (this.settings.config.databaseUrl) return false;
    const state = inspectDatabaseFile(this.settings.config.databasePath);
    const imports = MIGRATIONS.find((migration) => migration.name.startsWith("imports from other stores"))?.version ?? Number.POSITIVE_INFINITY;
    return state.kind === "ours" && state.schemaVersion < imports;
  }

  /**
   * Creates and migrates the database when there is none at the configured path and its folder exists; true when it
   * did. (Without the folder the command's open says there is no database, and where to point it.)
   */
  createDatabase(): boolean {
    const path = this.settings.config.databasePath;
    if (this.hasDatabase() || !existsSync(dirname(path))) return false;
    openSqliteBackend(path, "private").close();
    this.note(`created the database ${path}`);
    return true;
  }

  /** Opens the configured path for writing, creating the database and its folder when there is none. */
  openCreating(): CliStores {
    if (!this.hasDatabase()) openSqliteBackend(this.settings.config.databasePath, "private").close(); // makes the folder too
    return this.open("write");
  }

  /**
   * Throws LcmError("invalid_input") when writing `target` would overwrite the configured database or one of the files
   * it keeps beside it (whatever path names it); `what` names the output in the message.
   */
  refuseDatabaseTarget(target: string, what: string): void {
    if (this.settings.config.databaseUrl) return;
    assertNotDatabaseFile(target, this.settings.config.databasePath, what);
  }

  /** An empty database in memory, for a dry run against a database that does not exist yet; closed with the command. */
  openScratch(): LcmBackend {
    const scratch = openSqliteBackend(":memory:", "private");
    this.scratches.push(scratch);
    return scratch;
  }

  progress(title: string): Progress {
    return progressBar(title, { json: this.options.json === true, stream: this.environment.stderr, env: this.environment.env });
  }

  /** What the services a command runs log: warnings and errors as notes on stderr; info and debug not shown. */
  readonly logger: Logger = {
    debug: () => undefined, info: () => undefined, warn: (message) => this.note(message), error: (message) => this.note(message),
  };

  /** A line for the person at the terminal (stderr: never mixed into the output). */
  note(text: string): void {
    this.environment.stderr.write(`lcm: ${text}\n`);
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = null;
    await opened?.backend.close();
    for (const scratch of this.scratches.splice(0)) await scratch.close();
  }
}

/** Runs one command: prints its output or its error, sets the exit code, closes the database. Never throws. */
export async function runCommand<T>(
  environment: CliEnvironment, name: string, options: CommonOptions, body: (runtime: CliRuntime) => Promise<CommandOutput<T>>,
): Promise<void> {
  const runtime = new CliRuntime(environment, options);
  try {
    const output = await body(runtime);
    write(environment.stdout, options.json ? JSON.stringify(output.data, null, 2) : output.text);
    environment.setExitCode(output.exitCode ?? EXIT.ok);
  } catch (error) {
    const { exitCode, code } = exitCodeOf(error);
    const message = error instanceof CliError || exitCode !== EXIT.internal ? messageOf(error) : `failed unexpectedly: ${describeError(error)}`;
    environment.stderr.write(`lcm ${name}: ${message}\n`);
    if (options.json) write(environment.stdout, JSON.stringify({ error: { code, exitCode, message } }, null, 2));
    environment.setExitCode(exitCode);
  } finally {
    await runtime.close().catch((error: unknown) => environment.stderr.write(`lcm ${name}: closing the database failed: ${describeError(error)}\n`));
  }
}

/** Whether a command opened with `mode` only reads (SQLite's "prefer-write" writes whenever it can, as PostgreSQL always can). */
function isReadOnly(mode: AccessMode): boolean {
  return mode === "read" || mode === "read-live";
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : describeError(error);
}

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text.endsWith("\n") ? text : `${text}\n`);
}

/** Resolves when the person stops a long-running command (Ctrl-C: SIGINT, or SIGTERM), and stops listening then. */
export function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
