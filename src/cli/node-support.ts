/**
 * What the `lcm` bin finds out before it loads anything that needs SQLite: whether this Node has node:sqlite with
 * what LCM uses of it, the package's version (for `lcm --version`), and how to stop quietly when the reader of a
 * pipe goes away (`lcm dag --json | head`). Nothing here imports node:sqlite statically, so it runs on any Node.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The oldest Node whose node:sqlite has everything LCM calls (`StatementSync.setReturnArrays` came in 22.16). */
export const MINIMUM_NODE_VERSION = "22.16";

/** Why this Node cannot run LCM's SQLite code, or null when it can. Never throws. */
export async function sqliteProblem(): Promise<string | null> {
  let sqlite: unknown;
  try {
    sqlite = await import("node:sqlite");
  } catch {
    return "it has no node:sqlite module";
  }
  const statement = (sqlite as { StatementSync?: { prototype?: { setReturnArrays?: unknown } } }).StatementSync;
  if (typeof statement?.prototype?.setReturnArrays !== "function") {
    return "its node:sqlite module lacks what LCM uses";
  }
  return null;
}

/** The message for a Node that cannot run `lcm` (after "lcm: "): what is needed and three ways to run it. */
export function unsupportedNodeMessage(problem: string): string {
  return `cannot run on Node ${process.versions.node}: ${problem} (LCM needs Node ${MINIMUM_NODE_VERSION} or newer). Run it on a newer Node: ` +
    "inside a clone of the plugin, `npx lcm …` uses the Node 24 the repository pins; where OpenClaw is installed, " +
    "`openclaw lcm …` runs the same commands on OpenClaw's Node (24.16 or newer); or install Node 24 and run " +
    "`node <plugin folder>/dist/src/cli/bin.js …`.";
}

/** The version in the plugin's package.json (found upwards from this file, in src/ or in dist/src/). */
export function packageVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    try {
      const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === PACKAGE_NAME && typeof manifest.version === "string") return manifest.version;
    } catch {
      // No package.json in this folder (or not readable): look one folder up.
    }
    folder = dirname(folder);
  }
  return "unknown";
}

const PACKAGE_NAME = "openclaw-lcm";

/**
 * When the reader of `stream` closes the pipe (`lcm … | head`), writes fail with EPIPE, emitted as an error event
 * that would otherwise end the process with a stack trace: `onBrokenPipe` runs instead (once). Other errors are
 * rethrown as before. Installs its listener once per stream.
 */
export function onBrokenPipe(stream: NodeJS.WritableStream, handle: () => void): void {
  if (guarded.has(stream)) return;
  guarded.add(stream);
  let handled = false;
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    if (handled) return;
    handled = true;
    handle();
  });
}

const guarded = new WeakSet<NodeJS.WritableStream>();
