/**
 * Measures how src/ is laid out (issue 26, specs/026-layers.md): top-level folders, the folder-level import graph's
 * cycles with the file-to-file imports that make them, SQLite outside the backend (node:sqlite, opened connections,
 * SQL statements in string literals), and files over 500 lines. Reads the sources only; runs and writes nothing.
 * `--moves specs/026-moves.tsv` measures the layout a move map would give, before any file moves.
 * Usage: npx tsx scripts/architecture-report.ts [--json] [--depth 2] [--backend sqlite,store/sqlite,db] [--moves FILE] [--src src]
 */
import { readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { folderOf, readSourceFiles, stronglyConnected, type FileImport } from "./source-facts.js";

/** Lines above which a source file counts as too long to read in one sitting (issue 26's bar). */
const LONG_FILE_LINES = 500;

interface Options { json: boolean; depth: number; backend: string[]; source: string; moves: string | null }

function parseOptions(argv: readonly string[]): Options {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const options: Options = { json: false, depth: 1, backend: ["sqlite", "store/sqlite", "db"], source: join(root, "src"), moves: null };
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === "--json") options.json = true;
    else if (flag === "--depth" && value && /^[1-9]$/.test(value)) (options.depth = Number(value)), index++;
    else if (flag === "--backend" && value) (options.backend = value.split(",").filter(Boolean)), index++;
    else if (flag === "--src" && value) (options.source = resolve(value)), index++;
    else if (flag === "--moves" && value) (options.moves = resolve(value)), index++;
    else {
      console.error(`unknown or incomplete option ${JSON.stringify(flag)}; expected --json, --depth 1-9, --backend a,b, --moves FILE, --src DIR`);
      process.exit(2);
    }
  }
  return options;
}

/**
 * Where each file ends up after a move map: lines `[commit<TAB>]src/old.ts<TAB>src/new.ts`, applied in order (a
 * later line may move a file again); paths outside src/ (tests) are ignored. Returns paths relative to src/.
 */
function readMoves(path: string | null): (file: string) => string {
  if (path === null) return (file) => file;
  const moves = new Map<string, string>();
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const columns = line.trim().split("\t");
    const [from, to] = columns.slice(-2);
    if (columns.length < 2 || !from?.startsWith("src/") || !to?.startsWith("src/")) continue;
    const before = from.slice(4);
    const after = to.slice(4);
    for (const [original, current] of moves) if (current === before) moves.set(original, after);
    if (![...moves.values()].includes(after)) moves.set(before, after);
  }
  return (file) => moves.get(file) ?? file;
}

function isInBackend(path: string, backend: readonly string[]): boolean {
  return backend.some((folder) => path === folder || path.startsWith(`${folder}/`));
}

function measure(options: Options) {
  const moved = readMoves(options.moves);
  const files = readSourceFiles(options.source);
  for (const file of files) {
    file.path = moved(file.path);
    for (const link of file.imports) Object.assign(link, { from: moved(link.from), to: moved(link.to) });
    for (const use of [...file.sqlite, ...file.sql]) use.file = file.path;
  }
  const known = new Set(files.map((file) => file.path));
  const imports = files.flatMap((file) => file.imports).filter((link) => known.has(link.to));
  const folderOfFile = (path: string) => folderOf(path, options.depth);

  const folders = new Map<string, { files: number; lines: number }>();
  for (const file of files) {
    const folder = folderOf(file.path, 1);
    if (!file.path.includes("/")) continue;
    const entry = folders.get(folder) ?? { files: 0, lines: 0 };
    folders.set(folder, { files: entry.files + 1, lines: entry.lines + file.lines });
  }

  const edges = new Map<string, Set<string>>();
  const evidence = new Map<string, FileImport[]>();
  for (const link of imports) {
    const from = folderOfFile(link.from);
    const to = folderOfFile(link.to);
    if (from === to) continue;
    edges.set(from, (edges.get(from) ?? new Set()).add(to));
    evidence.set(`${from} → ${to}`, [...(evidence.get(`${from} → ${to}`) ?? []), link]);
  }
  const nodes = [...new Set(files.map((file) => folderOfFile(file.path)))].sort();
  const cycles = stronglyConnected(nodes, edges).map((members) => {
    const inside = new Set(members);
    const folderEdges = [...evidence.entries()]
      .filter(([, links]) => inside.has(folderOfFile(links[0]!.from)) && inside.has(folderOfFile(links[0]!.to)))
      .map(([edge, links]) => ({ edge, typeOnly: links.every((link) => link.kind === "type"), imports: links }))
      .sort((a, b) => a.imports.length - b.imports.length || a.edge.localeCompare(b.edge));
    return { folders: members, edges: folderEdges };
  });

  const outside = files.filter((file) => !isInBackend(file.path, options.backend));
  const sqlite = outside.filter((file) => file.sqlite.length > 0 || file.sql.length > 0)
    .map((file) => ({ file: file.path, uses: file.sqlite, statements: file.sql }));
  const backendImporters = outside
    .map((file) => ({ file: file.path, imports: file.imports.filter((link) => isInBackend(link.to, options.backend)) }))
    .filter((entry) => entry.imports.length > 0);
  const longFiles = files.filter((file) => file.lines > LONG_FILE_LINES)
    .map((file) => ({ file: file.path, lines: file.lines })).sort((a, b) => b.lines - a.lines);

  return {
    source: relative(process.cwd(), options.source) || ".",
    moves: options.moves === null ? null : relative(process.cwd(), options.moves),
    depth: options.depth,
    backend: options.backend,
    totals: {
      files: files.length,
      lines: files.reduce((sum, file) => sum + file.lines, 0),
      folders: folders.size,
      rootFiles: files.filter((file) => !file.path.includes("/")).length,
    },
    folders: [...folders.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([folder, size]) => ({ folder, ...size })),
    folderEdges: [...evidence.entries()].map(([edge, links]) => ({ edge, imports: links.length })),
    cycles,
    sqliteOutsideBackend: sqlite,
    backendImportedFrom: backendImporters,
    longFiles,
  };
}

type Report = ReturnType<typeof measure>;

function countBy(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].map(([value, count]) => (count > 1 ? `${value}×${count}` : value)).join(", ");
}

function printReport(report: Report): void {
  const out: string[] = [];
  const after = report.moves === null ? "" : `, as laid out after the moves in ${report.moves}`;
  out.push(`# ${report.source}: ${report.totals.files} files, ${report.totals.lines} lines${after}`);
  out.push("", `## Top-level folders (${report.totals.folders}, plus ${report.totals.rootFiles} files at the top)`);
  for (const { folder, files, lines } of report.folders) out.push(`  ${folder.padEnd(14)} ${String(files).padStart(3)} files ${String(lines).padStart(6)} lines`);

  out.push("", `## Folder-level cycles (folders to depth ${report.depth}; type-only imports count, as in test/architecture.test.ts)`);
  if (report.cycles.length === 0) out.push("  none");
  report.cycles.forEach((cycle, number) => {
    out.push(`  cycle ${number + 1}: ${cycle.folders.length} folders: ${cycle.folders.join(", ")}`);
    out.push("    edges inside it, fewest imports first (the cheapest to cut):");
    for (const { edge, typeOnly, imports } of cycle.edges) {
      out.push(`    ${edge} (${imports.length}${typeOnly ? ", types only" : ""})`);
      for (const link of imports) out.push(`      ${link.from}:${link.line} → ${link.to}${link.kind === "static" ? "" : ` (${link.kind})`}`);
    }
  });

  out.push("", `## SQLite outside the backend (${report.backend.join(", ")}): node:sqlite, opened connections, SQL in literals`);
  if (report.sqliteOutsideBackend.length === 0) out.push("  none");
  for (const { file, uses, statements } of report.sqliteOutsideBackend) {
    const parts = [...new Set(uses.map((use) => `${use.what} :${use.line}`))];
    if (statements.length > 0) parts.push(`SQL ${countBy(statements.map((use) => use.what))} from :${statements[0]!.line}`);
    out.push(`  ${file}: ${parts.join("; ")}`);
  }

  out.push("", `## Files outside the backend that import it`);
  for (const { file, imports } of report.backendImportedFrom) {
    out.push(`  ${file} → ${[...new Set(imports.map((link) => link.to))].join(", ")}`);
  }

  out.push("", `## Files over ${LONG_FILE_LINES} lines`);
  if (report.longFiles.length === 0) out.push("  none");
  for (const { file, lines } of report.longFiles) out.push(`  ${file} ${lines}`);

  const largest = report.cycles.map((cycle) => cycle.folders.length).join(" + ") || "0";
  out.push("", "## Summary");
  out.push(`  top-level folders: ${report.totals.folders}`);
  out.push(`  folder-level cycles: ${report.cycles.length} (folders in each: ${largest})`);
  out.push(`  files outside the backend with SQLite or SQL: ${report.sqliteOutsideBackend.length}`);
  out.push(`  files outside the backend that import it: ${report.backendImportedFrom.length}`);
  out.push(`  files over ${LONG_FILE_LINES} lines: ${report.longFiles.length}`);
  console.log(out.join("\n"));
}

const options = parseOptions(process.argv.slice(2));
const report = measure(options);
if (options.json) console.log(JSON.stringify(report, null, 2));
else printReport(report);
