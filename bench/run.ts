/**
 * `npm run bench`: compiles src/ and bench/ with tsc (bench/.data/build: the figures are those of the shipped
 * JavaScript), generates (or reuses) the datasets, runs every phase for each history size in a process of
 * its own, and writes bench/results/latest.json, bench/results/latency.svg and the results section of
 * docs/benchmarks.md. Results of sizes not run this time are kept from the previous latest.json, so
 * `--sizes 1M` on a quiet machine completes a table started at 10k,100k.
 *
 *   npm run bench                                  10k, 100k and 1M (about 10–15 min with a cold cache)
 *   npm run bench -- --sizes 10k,100k              chosen sizes
 *   npm run bench -- --phases assemble,search      chosen phase groups (storage, open, assemble, search,
 *                                                  recall, mcp, ingest, compaction, backlog, quality)
 *   npm run bench -- --repetitions 50 --seed 7     fewer samples per latency phase; another dataset
 *   npm run bench -- --rebuild                     regenerate the cached datasets
 *   npm run bench -- --backend postgres            the same phases on PostgreSQL (a server started on 127.0.0.1 for
 *                                                  the run, each size copied into a database of its own); results in
 *                                                  bench/results/latest-postgres.json and their own section of the docs
 *   npm run bench -- --backend postgres --compare bench/results/runs/x.json   beside that SQLite run, not latest.json
 *   npm run bench -- --no-write                    print only; leave results and docs untouched
 *   npm run bench -- --report-only                 rewrite the chart and docs/benchmarks.md from latest.json
 *   npm run bench -- --help                        these lines
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type SizeResult, parseSize, sizeLabel } from "./bars.js";
import { datasetPaths, type DatasetManifest } from "./dataset.js";
import { BUILD_DIR, RESULTS_DIR, ROOT } from "./paths.js";
import { latencyChart } from "./report/chart.js";
import { resultsMarkdown, spliceResults } from "./report/markdown.js";
import { postgresMarkdown, splicePostgres } from "./report/postgres-markdown.js";
import { BENCH_POSTGRES_SETTINGS, startBenchPostgres } from "./postgres-target.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "10k,100k,1M" },
    seed: { type: "string", default: "42" },
    repetitions: { type: "string", default: "200" },
    phases: { type: "string" },
    backend: { type: "string", default: "sqlite" },
    compare: { type: "string" },
    rebuild: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
    "report-only": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

if (values.help) {
  // The usage lines of this file's header.
  const header = readFileSync(new URL(import.meta.url), "utf8").split("\n").filter((line) => /^ \*   (npm run bench| {40})/.test(line));
  console.log(["Usage:", ...header.map((line) => line.slice(2))].join("\n"));
  process.exit(0);
}

if (values.backend !== "sqlite" && values.backend !== "postgres") {
  console.error(`--backend must be sqlite or postgres, got "${values.backend}".`);
  process.exit(2);
}
const postgres = values.backend === "postgres";
const SQLITE_LATEST = join(RESULTS_DIR, "latest.json");
const LATEST = postgres ? join(RESULTS_DIR, "latest-postgres.json") : SQLITE_LATEST;
const DOCS = join(ROOT, "docs", "benchmarks.md");
const seed = Number(values.seed);
const repetitions = Number(values.repetitions);
const sizes = values.sizes.split(",").map(parseSize);

interface LatestFile {
  generatedAt: string;
  machine: string;
  seed: number;
  sizes: SizeResult[];
}

/** Compiles src/ and bench/ to bench/.data/build. Type errors are reported, not fatal: tsc still emits. */
function compile(): void {
  const started = performance.now();
  rmSync(BUILD_DIR, { recursive: true, force: true });
  try {
    execFileSync(process.execPath, [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(ROOT, "bench", "tsconfig.json")], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (error) {
    const output = String((error as { stdout?: string }).stdout ?? "").trim().split("\n").slice(0, 5).join("\n");
    console.log(`tsc reported type errors (compiled anyway):\n${output}`);
  }
  console.log(`compiled src/ and bench/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

function child(script: string, args: string[]): string {
  return execFileSync(process.execPath, ["--expose-gc", join(BUILD_DIR, "bench", script.replace(/\.ts$/, ".js")), ...args], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 2 ** 20,
  });
}

const machine = `${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM, Node ${process.version}`;
console.log(`LCM benchmark${postgres ? " on PostgreSQL" : ""} · sizes ${sizes.map(sizeLabel).join(", ")} · seed ${seed} · ${repetitions} repetitions · ${machine}`);
const measured: SizeResult[] = [];
if (!values["report-only"]) compile();
const server = postgres && !values["report-only"] ? await startBenchPostgres((line) => console.log(line)) : null;
if (server) {
  // The size processes find the server here (run-size.ts); the server stops with this process, whatever happens.
  process.env.LCM_BENCH_POSTGRES_URL = server.url;
  process.once("SIGINT", () => void server.stop().finally(() => process.exit(130)));
  console.log(`PostgreSQL server on 127.0.0.1:${server.port} (pid ${server.pid})`);
}
try {
  for (const size of values["report-only"] ? [] : sizes) {
    const started = performance.now();
    if (values.rebuild) for (const path of Object.values(datasetPaths(seed, size))) rmSync(path, { recursive: true, force: true });
    const build = JSON.parse(child("build-dataset.ts", [String(seed), String(size)]).trim().split("\n").at(-1)!) as {
      cached: boolean;
      manifest: DatasetManifest;
    };
    const { manifest } = build;
    console.log(
      `${sizeLabel(size)}: dataset ${build.cached ? "cached" : `built in ${manifest.build.seconds} s (${manifest.build.messagesPerSecond.toLocaleString("en")} msg/s)`}, ` +
        `${manifest.messages.toLocaleString("en")} messages, ${(manifest.textBytes / 2 ** 20).toFixed(0)} MB of text, compaction ${manifest.compaction.status}`,
    );
    mkdirSync(RESULTS_DIR, { recursive: true });
    const out = join(RESULTS_DIR, `size-${size}.json.tmp`);
    child("run-size.ts", [String(seed), String(size), String(repetitions), out, ...(values.phases ? [values.phases] : [])]);
    const result = JSON.parse(readFileSync(out, "utf8")) as SizeResult;
    rmSync(out, { force: true });
    result.build.cached = build.cached;
    measured.push(result);
    console.log(`${sizeLabel(size)}: done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
} finally {
  await server?.stop();
}

if (values["no-write"]) process.exit(0);
const previous: LatestFile | null = existsSync(LATEST) ? (JSON.parse(readFileSync(LATEST, "utf8")) as LatestFile) : null;
const merged = new Map<number, SizeResult>();
for (const size of previous?.seed === seed ? previous.sizes : []) merged.set(size.size, size);
for (const size of measured) {
  const earlier = merged.get(size.size);
  // A run of some phase groups keeps the other groups' figures of the same size.
  const kept = values.phases && earlier ? earlier.phases.filter((phase) => !size.phases.some((fresh) => fresh.name === phase.name)) : [];
  // A partial run's process saw only its own phases: the peak RSS of the size is the larger of the two runs'.
  const maxRssMb = kept.length > 0 && earlier ? Math.max(earlier.maxRssMb, size.maxRssMb) : size.maxRssMb;
  merged.set(size.size, { ...size, maxRssMb, phases: [...kept, ...size.phases] });
}
const latest: LatestFile = { generatedAt: new Date().toISOString(), machine, seed, sizes: [...merged.values()].sort((left, right) => left.size - right.size) };
writeFileSync(LATEST, JSON.stringify(latest, null, 2) + "\n");
const document = existsSync(DOCS) ? readFileSync(DOCS, "utf8") : "# Benchmarks\n";
if (postgres) {
  // The SQLite figures beside them: latest.json, or a run of the same sizes made at the same time (--compare).
  const compared = values.compare ? resolve(ROOT, values.compare) : SQLITE_LATEST;
  const sqliteSizes = existsSync(compared) ? (JSON.parse(readFileSync(compared, "utf8")) as LatestFile).sizes : [];
  const settings = Object.entries(BENCH_POSTGRES_SETTINGS).map(([name, value]) => `${name}=${value}`).join(", ") + ", shared_buffers=256MB, everything else at its default";
  writeFileSync(DOCS, splicePostgres(document, postgresMarkdown(latest.sizes, sqliteSizes, machine, settings, relative(ROOT, compared))));
  console.log(`wrote ${LATEST} and the PostgreSQL section of docs/benchmarks.md`);
} else {
  writeFileSync(join(RESULTS_DIR, "latency.svg"), latencyChart(latest.sizes));
  writeFileSync(DOCS, spliceResults(document, resultsMarkdown(latest.sizes, machine)));
  console.log(`wrote ${LATEST}, bench/results/latency.svg and the results section of docs/benchmarks.md`);
}
