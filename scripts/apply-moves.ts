/**
 * Applies moves of a move map (spec 026: `specs/026-moves.tsv`, lines of "commit, old path, new path"): `git mv` of
 * each file, then every relative import specifier, in every TypeScript and JavaScript file of the repository's code
 * folders, that named a moved file (or was written from a moved file) is rewritten to the new place. What the
 * compiler cannot see (paths in strings, docs) is listed at the end for a hand check.
 *
 *   npx tsx scripts/apply-moves.ts specs/026-moves.tsv M1 M2   # the moves of commits M1 and M2
 *   npx tsx scripts/apply-moves.ts specs/026-moves.tsv --all
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CODE_ROOTS = ["src", "test", "bench", "scripts", "web", "index.ts"];
const CODE_FILE = /\.(ts|mts|mjs|js)$/;
/** `from "…"`, `import "…"`, `import("…")`, `export … from "…"` with a relative specifier. */
const SPECIFIER = /((?:from|import)\s*\(?\s*)(["'])(\.{1,2}\/[^"']+)\2/g;

const [mapFile, ...selection] = process.argv.slice(2);
if (!mapFile || selection.length === 0) {
  console.error("usage: apply-moves.ts <moves.tsv> (<commit>… | --all)");
  process.exit(2);
}
/** The selected moves, one map per commit, in the map's order (a file may move again in a later commit). */
const groups = new Map<string, Map<string, string>>();
for (const line of readFileSync(resolve(ROOT, mapFile), "utf8").split("\n")) {
  if (line.trim() === "" || line.startsWith("#")) continue;
  const [commit, from, to] = line.split("\t");
  if (!commit || !from || !to) throw new Error(`A move line needs commit, old path and new path: ${JSON.stringify(line)}`);
  if (!selection.includes("--all") && !selection.includes(commit)) continue;
  if (!groups.has(commit)) groups.set(commit, new Map());
  groups.get(commit)!.set(from, to);
}
const allMoved: string[] = [];
for (const [commit, moves] of groups) {
  for (const [from] of moves) {
    if (!existsSync(join(ROOT, from))) throw new Error(`${commit}: ${from} does not exist (moves before it were applied).`);
  }
  console.log(`${commit}: ${applyMoves(moves)}`);
  allMoved.push(...moves.keys());
}

function codeFiles(path: string): string[] {
  const full = join(ROOT, path);
  if (!existsSync(full)) return [];
  if (statSync(full).isFile()) return CODE_FILE.test(path) ? [path] : [];
  return readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === "node_modules" || entry.name === ".data" || entry.name.startsWith(".")) return [];
    return codeFiles(join(path, entry.name));
  });
}

/** The source file a specifier written in `file` names (a `.js` specifier names the `.ts` beside it). */
function targetOf(moves: Map<string, string>, file: string, specifier: string): string {
  const target = join(dirname(file), specifier);
  if (/\.js$/.test(target) && existsSync(join(ROOT, target.replace(/\.js$/, ".ts")))) return target.replace(/\.js$/, ".ts");
  if (/\.js$/.test(target) && moves.has(target.replace(/\.js$/, ".ts"))) return target.replace(/\.js$/, ".ts");
  return target;
}

function specifierFor(fromFile: string, target: string, original: string): string {
  let path = relative(dirname(fromFile), target);
  if (!path.startsWith(".")) path = `./${path}`;
  if (original.endsWith(".js") && path.endsWith(".ts")) path = path.replace(/\.ts$/, ".js");
  return path;
}

/** Rewrites the specifiers first (while every old path still resolves), then moves. */
function applyMoves(moves: Map<string, string>): string {
  const files = CODE_ROOTS.flatMap(codeFiles);
  let rewritten = 0;
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const newFile = moves.get(file) ?? file;
    const next = text.replace(SPECIFIER, (whole, lead: string, quote: string, specifier: string) => {
      const target = targetOf(moves, file, specifier);
      const newTarget = moves.get(target) ?? target;
      if (newFile === file && newTarget === target) return whole;
      rewritten++;
      return `${lead}${quote}${specifierFor(newFile, newTarget, specifier)}${quote}`;
    });
    if (next !== text) writeFileSync(join(ROOT, file), next);
  }
  for (const [from, to] of moves) {
    mkdirSync(join(ROOT, dirname(to)), { recursive: true });
    execFileSync("git", ["mv", from, to], { cwd: ROOT });
  }
  return `${moves.size} files moved, ${rewritten} import specifiers rewritten`;
}

// What tsc cannot check: the old paths written as text anywhere in the repository.
let mentions = "";
try {
  mentions = execFileSync("git", ["grep", "-n", "-F", ...allMoved.flatMap((from) => ["-e", from.replace(/\.ts$/, "")]), "--", ".", ":!specs"], {
    cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024,
  }).trim();
} catch (error) {
  if ((error as { status?: number }).status !== 1) throw error; // 1: no line names an old path
}
if (mentions !== "") console.log(`Old paths still named as text (check each by hand):\n${mentions}`);
