/**
 * What `lcm` exits with. Scripts branch on these; docs/operations.md lists them. Each failure has its own code so
 * that "no database here" is not confused with "someone else's database" or "the database is fine but has problems".
 */
import { isLcmError } from "../errors.js";

export const EXIT = {
  /** Done. */
  ok: 0,
  /** An unexpected failure (a bug or an I/O error): the message says what happened. */
  internal: 1,
  /** Bad usage: an unknown command or option, a missing or invalid argument. */
  usage: 2,
  /** The conversation, summary or file asked for is not stored. */
  notFound: 3,
  /** No LCM database at the path (missing or empty file). */
  noDatabase: 4,
  /** The file is not LCM's (another application's database, not SQLite, or from a newer LCM): left untouched. */
  refused: 5,
  /** The database cannot be used for this: unreadable, read-only for a command that writes, locked too long. */
  unavailable: 6,
  /** `doctor` found problems that are still there (repairable ones not repaired, or ones an operator must decide). */
  problemsFound: 7,
  /** The configuration (plugins.entries.lcm.config, LCM_* variables, openclaw.json) is invalid. */
  config: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error the CLI reports with its own exit code and message (no stack trace). */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(readonly exitCode: ExitCode, message: string, readonly code: string = codeName(exitCode)) {
    super(message);
  }
}

function codeName(exitCode: ExitCode): string {
  return Object.entries(EXIT).find(([, value]) => value === exitCode)?.[0] ?? "internal";
}

/** The exit code and a stable code name for any error a command threw. */
export function exitCodeOf(error: unknown): { exitCode: ExitCode; code: string } {
  if (error instanceof CliError) return { exitCode: error.exitCode, code: error.code };
  if (isLcmError(error)) {
    // The command's database (sqlite/command-connection.ts) names its problem; each has its own exit code.
    const problem = error.details?.databaseProblem;
    if (problem === "no-database") return { exitCode: EXIT.noDatabase, code: "noDatabase" };
    if (problem === "refused") return { exitCode: EXIT.refused, code: "refused" };
    switch (error.code) {
      case "invalid_input":
        return { exitCode: EXIT.usage, code: "usage" };
      case "not_found":
      case "forbidden":
        return { exitCode: EXIT.notFound, code: "notFound" };
      case "invalid_config":
        return { exitCode: EXIT.config, code: "config" };
      case "unavailable":
      case "busy":
      case "storage":
        return { exitCode: EXIT.unavailable, code: "unavailable" };
      default:
        return { exitCode: EXIT.internal, code: error.code };
    }
  }
  return { exitCode: EXIT.internal, code: "internal" };
}
