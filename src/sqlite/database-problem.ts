/**
 * Why LCM cannot write its database, as data (`DatabaseProblem`) and as the one message every surface shows: the
 * log, the degraded engine's reasons, `/lcm status` and the recall tools' error results. Each message says what
 * was found at which path, that the file was left untouched, and what to do, naming the setting to change.
 */
import { basename, dirname, join } from "node:path";
import { DATABASE_PATH_SETTING, DEFAULT_DATABASE_FILE } from "../config.js";
import { LcmError } from "../errors.js";

export type DatabaseProblem =
  /** Someone else's SQLite database (`peer`: the lossless-claw plugin's). */
  | { kind: "foreign"; found: string; peer: boolean }
  | { kind: "not-sqlite"; found: string }
  /** A file of ours written by a newer LCM. */
  | { kind: "newer-schema"; schemaVersion: number; supportedVersion: number }
  /** A file of ours that this process may not write; `readable`: its schema is current, so it can be read as it is. */
  | { kind: "read-only"; reason: string; readable: boolean }
  | { kind: "unreadable"; reason: string }
  /** Anything else that failed while opening or upgrading the file (a missing folder, disk I/O, a lock held too long). */
  | { kind: "cannot-open"; reason: string };

/** What is wrong with the database at `path`, that it was left alone, and how to fix it. */
export function describeDatabaseProblem(path: string, problem: DatabaseProblem): string {
  const elsewhere = `set ${DATABASE_PATH_SETTING} to another file, e.g. ${otherFile(path)}, and restart the gateway`;
  switch (problem.kind) {
    case "foreign":
      return `The LCM database path ${path} holds ${problem.found}, not an LCM database. LCM left it untouched ` +
        `(contents, permissions and journal mode unchanged) and stores nothing. Fix: ${elsewhere}.` +
        (problem.peer ? ` To bring its history into LCM: openclaw lcm import lossless-claw ${path} (a dry run; --apply writes).` : "");
    case "not-sqlite":
      return `The LCM database path ${path} is ${problem.found}. LCM left it untouched and stores nothing. ` +
        `Fix: move that file away, or ${elsewhere}.`;
    case "newer-schema":
      return `The LCM database ${path} has schema version ${problem.schemaVersion}, newer than this plugin supports ` +
        `(${problem.supportedVersion}): a newer LCM wrote it. LCM left it untouched and stores nothing. ` +
        `Fix: upgrade the plugin, or ${elsewhere}.`;
    case "read-only":
      return `The LCM database ${path} cannot be written: ${problem.reason}. ` +
        (problem.readable ? "LCM opens it read-only (for /lcm status and the recall tools) and stores nothing new. " : "LCM stores nothing. ") +
        `Fix: make the file and its folder writable for the gateway's user (e.g. chmod u+w), which takes effect on ` +
        `the next turn, or ${elsewhere}.`;
    case "unreadable":
      return `The LCM database ${path} cannot be read (${problem.reason}), so LCM cannot tell whether it is its own; ` +
        `it left the file untouched and stores nothing. Fix: give the gateway's user read and write access to it, or ${elsewhere}.`;
    case "cannot-open":
      return `LCM could not open its database ${path}: ${problem.reason}. Nothing is stored until this is fixed. ` +
        `Fix: check that the folder can be created and written and that the disk has space, or ${elsewhere}.`;
  }
}

/** The error thrown when the database cannot be opened for what was asked; carries the path and the problem. */
export function databaseUnavailableError(path: string, problem: DatabaseProblem, cause?: unknown): LcmError {
  return new LcmError("unavailable", describeDatabaseProblem(path, problem), { databasePath: path, problem }, cause === undefined ? undefined : { cause });
}

/** The problem an `unavailable` error carries, if it is one. */
export function databaseProblemOf(error: unknown): DatabaseProblem | null {
  if (!(error instanceof LcmError) || error.code !== "unavailable") return null;
  const problem = error.details?.problem;
  return problem && typeof problem === "object" && "kind" in problem ? (problem as DatabaseProblem) : null;
}

function otherFile(path: string): string {
  const folder = dirname(path);
  return join(folder, basename(path) === DEFAULT_DATABASE_FILE ? DEFAULT_DATABASE_FILE.replace(/\.db$/, "-2.db") : DEFAULT_DATABASE_FILE);
}
