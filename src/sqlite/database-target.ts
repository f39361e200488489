/**
 * The guard every command that writes a file beside a database shares (`lcm backup`, `lcm export`): the target must
 * not be the live database nor one of its companions (-wal, -shm, -journal), whatever path names it (relative, a
 * symbolic link, a hard link). `--force` replaces an existing file; it must never replace the database itself.
 */
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { LcmError } from "../errors.js";

const COMPANIONS = ["", "-wal", "-shm", "-journal"];

/** Throws LcmError("invalid_input") when `target` is `databasePath` or one of its companion files; `what` names the output. */
export function assertNotDatabaseFile(target: string, databasePath: string, what: string): void {
  const candidate = canonical(target);
  for (const suffix of COMPANIONS) {
    const file = `${resolve(databasePath)}${suffix}`;
    if (candidate !== canonical(file) && !isSameFile(target, file)) continue;
    throw new LcmError(
      "invalid_input",
      `The ${what} target ${resolve(target)} is ${suffix === "" ? "the database itself" : `the database's ${suffix.slice(1)} file`} ` +
        `(${file}); writing there would destroy it, with or without --force. Give another path.`,
      { parameter: "path" },
    );
  }
}

/** The path with symbolic links resolved (of its folder when the file does not exist yet). */
function canonical(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute; // neither exists: compared as given
    }
  }
}

/** Two existing paths of one file (a hard link, or a path the realpath comparison missed). */
function isSameFile(first: string, second: string): boolean {
  if (!existsSync(first) || !existsSync(second)) return false;
  const a = statSync(first);
  const b = statSync(second);
  return a.dev === b.dev && a.ino === b.ino;
}
