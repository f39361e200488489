/**
 * The architecture as a test (spec 026): every top-level folder of src/ sits in one layer of LAYERS, imports only
 * what its row allows, forms no folder-level cycle, breaks none of the five forbidden edges; docs/architecture.md
 * names the same folders. The facts come from scripts/source-facts.ts, the same reader the architecture report uses.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { folderOf, readSourceFiles, stronglyConnected, type FileImport } from "../scripts/source-facts.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FILES = readSourceFiles(join(ROOT, "src"));
const KNOWN_FILES = new Set(FILES.map((file) => file.path));
/** Every relative import between two files of src/ (type-only, dynamic and worker-thread imports included). */
const IMPORTS = FILES.flatMap((file) => file.imports).filter((link) => KNOWN_FILES.has(link.to));

/**
 * A row of spec 026's layer table: `folder` (a top-level folder of src/, or a file at the top) may import folders of
 * layer `reaches` or lower, plus those in `also`, minus those in `except`. The forbidden edges below narrow it further.
 */
interface LayerRow { folder: string; layer: number; reaches: number; also?: readonly string[]; except?: readonly string[] }

const LAYER_NAMES: Readonly<Record<number, string>> = {
  6: "root", 5: "adapter", 4: "service", 3: "core", 2: "contracts and backend", 1: "kernel",
};

const LAYERS: readonly LayerRow[] = [
  { folder: "plugin.ts", layer: 6, reaches: 6 },
  { folder: "engine", layer: 5, reaches: 4 },
  { folder: "tools", layer: 5, reaches: 4 },
  { folder: "chat", layer: 5, reaches: 4 },
  { folder: "cli", layer: 5, reaches: 5, except: ["engine"] },
  { folder: "mcp", layer: 5, reaches: 4, also: ["tools", "manifest.ts"] },
  { folder: "inspector", layer: 5, reaches: 4 },
  { folder: "manifest.ts", layer: 5, reaches: 4, also: ["tools"] },
  { folder: "services", layer: 4, reaches: 4 },
  { folder: "repair", layer: 4, reaches: 4 },
  ...["sessions", "ingest", "assembly", "compaction", "summarize", "search", "retrieval", "large-files", "integrity",
    "retention", "transfer"].map((folder) => ({ folder, layer: 3, reaches: 3 })),
  { folder: "store", layer: 2, reaches: 1 },
  { folder: "sqlite", layer: 2, reaches: 1, also: ["store"] },
  { folder: "postgres", layer: 2, reaches: 1, also: ["store"] },
  ...["text", "messages", "tokens", "runtime", "metrics", "host", "config.ts", "contracts.ts", "records.ts", "errors.ts"]
    .map((folder) => ({ folder, layer: 1, reaches: 1 })),
];
const ROW_OF = new Map(LAYERS.map((row) => [row.folder, row]));

/** The host adapters: nothing below layer 5 may reach them (forbidden edge 1). */
const ADAPTERS = new Set(["engine", "tools", "chat", "cli", "mcp", "inspector"]);
/** The backends: each implements store/'s contracts, and only they hold SQL (forbidden edges 3-5). */
const BACKENDS = new Set(["sqlite", "postgres"]);
/** The composition roots that may open the backend (forbidden edge 3). */
const BACKEND_OPENERS = new Set(["plugin.ts", "cli/cli-runtime.ts", "cli/cli-config.ts", "cli/postgres-target.ts", "retention/retention-worker.ts"]);
/** Readers of another program's SQLite file: node:sqlite and SQL of their own, and `sqlite/database-file.ts` only. */
const PEER_READERS = new Set(["transfer/lossless-claw/peer-reader.ts", "transfer/lossless-claw/peer-schema.ts", "transfer/openclaw-agent-store.ts"]);
/** The bin's probe of whether this Node has node:sqlite. */
const NODE_PROBE = "cli/node-support.ts";

/** One broken rule: the file, line and target, and the rule. */
interface Violation { text: string }

/** The rules: a short name for each offending line, and the whole rule once per failure. */
const RULES = {
  layers: { short: "up a layer", full: "An import points to its own layer or a lower one (or to what its row of LAYERS adds), never up." },
  adapter: { short: "rule 1: core → host adapter", full: "Rule 1: core, services, kernel, contracts and backend never import engine/, tools/, chat/, cli/, mcp/, inspector/." },
  engine: { short: "rule 2: only plugin.ts imports engine/", full: "Rule 2: only plugin.ts imports engine/ (only the root hands the hooks to the host)." },
  backend: {
    short: "rule 3: core → a backend",
    full: "Rule 3: only plugin.ts, cli/cli-runtime.ts, cli/cli-config.ts, cli/postgres-target.ts and retention/retention-worker.ts import sqlite/ or postgres/; the peer-format readers import sqlite/database-file.ts only. Take the stores through their contracts in store/.",
  },
  belowBackend: { short: "rule 4: a backend or the contracts import up", full: "Rule 4: sqlite/ and postgres/ import only store/ and layer 1 (never each other); store/ imports only layer 1. Move the shared type down into store/ or the kernel." },
  sql: {
    short: "rule 5: SQL outside a backend",
    full: "Rule 5: node:sqlite and a SQLite connection only in sqlite/, SQL text only in sqlite/ and postgres/, and both in the peer-format readers (transfer/lossless-claw/peer-reader.ts, peer-schema.ts, transfer/openclaw-agent-store.ts) and cli/node-support.ts. Move the statement into a store of a backend.",
  },
} as const;
type Rule = keyof typeof RULES;

/**
 * The edges main breaks today (2026-11-27, 1c4a281: after R2 and R3) as `from → to` (a file of src/, or `SQL`, `node-sqlite`,
 * `connection` for rule 5), each with the rules it breaks and the refactor of spec 026 that removes it. Temporary:
 * the integrator deletes each entry when its refactor lands (the last test names the ones that no longer occur).
 */
function importViolation(rule: Rule, link: FileImport): Violation {
  const kind = link.kind === "static" ? "" : ` (${link.kind})`;
  const why = rule === "layers" ? layerProblem(folderOf(link.from), folderOf(link.to)) : RULES[rule].short;
  return { text: `${link.from}:${link.line} → ${link.to}${kind} (${why})` };
}

/** Whether a folder's row lets it import `target` (a folder), and why not when it does not. */
function layerProblem(from: string, target: string): string | null {
  const row = ROW_OF.get(from);
  const targetRow = ROW_OF.get(target);
  if (!row || !targetRow) return null; // the table test names the folder missing from the table
  if (row.except?.includes(target)) return `${from} may not import ${target}`;
  if (targetRow.layer <= row.reaches || row.also?.includes(target)) return null;
  const also = row.also ? `, ${row.also.join(", ")}` : "";
  return `${from} (layer ${row.layer} ${LAYER_NAMES[row.layer]}) may import layers ≤ ${row.reaches}${also}; ${target} is layer ${targetRow.layer} ${LAYER_NAMES[targetRow.layer]}`;
}

/** Which rule, if any, an import between two folders breaks (several may). */
function brokenRules(link: FileImport): Rule[] {
  const from = folderOf(link.from);
  const to = folderOf(link.to);
  if (from === to) return [];
  const fromLayer = ROW_OF.get(from)?.layer ?? 0;
  const toLayer = ROW_OF.get(to)?.layer ?? 0;
  const rules: Rule[] = [];
  if (layerProblem(from, to)) rules.push("layers");
  if (fromLayer <= 4 && ADAPTERS.has(to)) rules.push("adapter");
  if (to === "engine" && from !== "plugin.ts") rules.push("engine");
  const peerReading = PEER_READERS.has(link.from) && link.to === "sqlite/database-file.ts";
  if (BACKENDS.has(to) && !BACKEND_OPENERS.has(link.from) && !peerReading) rules.push("backend");
  if (BACKENDS.has(from) && to !== "store" && toLayer !== 1) rules.push("belowBackend");
  if (from === "store" && toLayer !== 1) rules.push("belowBackend");
  return rules;
}

/** Every import that breaks `rule`, as `file:line → target: rule`. */
function newImportViolations(rule: Rule): string[] {
  return IMPORTS.filter((link) => brokenRules(link).includes(rule)).map((link) => importViolation(rule, link).text);
}

/** Every use of node:sqlite or a connection outside sqlite/, and of SQL text outside the backends, but in the files allowed them. */
function sqliteViolations(): Violation[] {
  return FILES.filter((file) => folderOf(file.path) !== "sqlite" && !PEER_READERS.has(file.path) && file.path !== NODE_PROBE)
    .flatMap((file) => [...file.sqlite.filter((use) => use.kind !== "opening"), ...(folderOf(file.path) === "postgres" ? [] : file.sql)])
    .map((use) => ({ text: `${use.file}:${use.line}: ${use.what} (${RULES.sql.short})` }));
}

/** The folder graph (the one the report draws). */
function folderGraph(): { edges: Map<string, Set<string>>; evidence: Map<string, FileImport[]> } {
  const edges = new Map<string, Set<string>>();
  const evidence = new Map<string, FileImport[]>();
  for (const link of IMPORTS) {
    const from = folderOf(link.from);
    const to = folderOf(link.to);
    if (from === to) continue;
    edges.set(from, (edges.get(from) ?? new Set()).add(to));
    evidence.set(`${from} → ${to}`, [...(evidence.get(`${from} → ${to}`) ?? []), link]);
  }
  return { edges, evidence };
}

/** The files' cycles (static and type-only imports), first one found, as a list of paths back to the first. */
function fileCycle(): string[] | null {
  const graph = new Map<string, string[]>(FILES.map((file) => [file.path, []]));
  for (const link of IMPORTS) if (link.kind === "static" || link.kind === "type") graph.get(link.from)!.push(link.to);
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "visiting") return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, "visiting");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

/** The folders docs/architecture.md's Layers section names, one a line, each with the layer number above it. */
function documentedLayers(): { folders: Map<string, number>; crowded: string[] } {
  const text = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const section = text.slice(text.indexOf("## Layers"), text.indexOf("\n## ", text.indexOf("## Layers") + 1));
  const folders = new Map<string, number>();
  const crowded: string[] = [];
  let layer = 0;
  for (const line of section.split("\n")) {
    const names = [...line.matchAll(/\bsrc\/([\w.-]+?)(?:\/|(?=\s|$|`))/g)].map((match) => match[1]!);
    if (names.length === 0) continue;
    layer = Number(/^(\d)\s/.exec(line)?.[1] ?? layer);
    if (names.length > 1) crowded.push(line.trim());
    for (const name of names) folders.set(name, layer);
  }
  return { folders, crowded };
}

describe("the module graph", () => {
  it("has no import cycles between files", () => {
    expect(fileCycle()).toBeNull();
  });

  it("keeps the host API in the composition root: only plugin.ts registers with OpenClaw", () => {
    const offenders = FILES.filter((file) => file.path !== "plugin.ts"
      && /\.register(ContextEngine|Tool|Command)\(/.test(readFileSync(join(ROOT, "src", file.path), "utf8")));
    expect(offenders.map((file) => file.path)).toEqual([]);
  });

  it("never imports OpenClaw at module load", () => {
    const offenders = FILES.filter((file) => /from\s+["']openclaw/.test(readFileSync(join(ROOT, "src", file.path), "utf8")));
    expect(offenders.map((file) => file.path)).toEqual([]);
  });
});

describe("the layers (spec 026)", () => {
  it("has every top-level folder and top file of src/ in the layer table, and nothing else", () => {
    const tree = new Set(FILES.map((file) => folderOf(file.path)));
    const missing = [...tree].filter((folder) => !ROW_OF.has(folder))
      .map((folder) => `src/${folder} is in no layer: add it to the table LAYERS of test/architecture.test.ts and to docs/architecture.md`);
    const gone = LAYERS.filter((row) => !tree.has(row.folder))
      .map((row) => `src/${row.folder} is in the layer table but not in src/: remove it from LAYERS and docs/architecture.md`);
    expect([...missing, ...gone]).toEqual([]);
  });

  it("names every folder of the table in docs/architecture.md's Layers section, one a line, in its layer", () => {
    const { folders, crowded } = documentedLayers();
    const problems = [
      ...LAYERS.filter((row) => folders.get(row.folder) !== row.layer).map((row) => folders.has(row.folder)
        ? `docs/architecture.md puts src/${row.folder} in layer ${folders.get(row.folder)}; the table says ${row.layer}`
        : `docs/architecture.md does not name src/${row.folder}: add a line for it under layer ${row.layer}`),
      ...[...folders.keys()].filter((folder) => !ROW_OF.has(folder))
        .map((folder) => `docs/architecture.md names src/${folder}, which is not in the table`),
      ...crowded.map((line) => `docs/architecture.md names more than one folder on a line: ${line}`),
    ];
    expect(problems).toEqual([]);
  });

  it("never imports up a layer or beyond what a folder's row allows", () => {
    expect(newImportViolations("layers"), RULES.layers.full).toEqual([]);
  });

  it("has no folder-level cycle (type-only, dynamic and worker imports count)", () => {
    const { edges, evidence } = folderGraph();
    const cycles = stronglyConnected([...edges.keys()].sort(), edges).map((members) => {
      const inside = [...evidence.entries()].filter(([edge]) => edge.split(" → ").every((folder) => members.includes(folder)));
      const edgeTexts = inside.map(([edge, links]) => `${edge} (${links.length}: ${links.map((link) => `${link.from}:${link.line}`).join(", ")})`);
      return `cycle of ${members.join(", ")}: ${edgeTexts.join("; ")}`;
    });
    expect(cycles).toEqual([]);
  });
});

describe("the forbidden edges (spec 026)", () => {
  it("rule 1: nothing below the adapters imports a host adapter", () => {
    expect(newImportViolations("adapter"), RULES.adapter.full).toEqual([]);
  });

  it("rule 2: only plugin.ts imports engine/", () => {
    expect(newImportViolations("engine"), RULES.engine.full).toEqual([]);
  });

  it("rule 3: only the composition roots import sqlite/ or postgres/, and the peer-format readers only sqlite/database-file.ts", () => {
    expect(newImportViolations("backend"), RULES.backend.full).toEqual([]);
  });

  it("rule 4: sqlite/ and postgres/ import only store/ and the kernel; store/ only the kernel", () => {
    expect(newImportViolations("belowBackend"), RULES.belowBackend.full).toEqual([]);
  });

  it("rule 5: no node:sqlite or SQLite connection outside sqlite/, no SQL text outside the backends, but in the peer-format readers and the Node probe", () => {
    const offenders = sqliteViolations().map((violation) => violation.text);
    expect(offenders, RULES.sql.full).toEqual([]);
  });
});
