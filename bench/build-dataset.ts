/**
 * Child process of `npm run bench`: makes sure the cached dataset for one seed and size exists, building it
 * through the real plugin entry when it does not. A cached dataset whose compacted conversation could not be
 * swept (compaction had not landed when it was built) is swept now, in place, once the engine can.
 * Usage: build-dataset.ts <seed> <size>. Prints the manifest as one JSON line.
 */
import { writeFileSync } from "node:fs";
import { closeSharedDatabase } from "../src/sqlite/connection-registry.js";
import { benchConfig, buildDataset, compactOnce, datasetPaths, foldLog, readManifest } from "./dataset.js";
import { openBenchDatabase } from "./bench-database.js";
import { BenchHost } from "./host.js";

const seed = Number(process.argv[2]);
const size = Number(process.argv[3]);
if (!Number.isInteger(seed) || !Number.isInteger(size) || size <= 0) throw new Error("usage: build-dataset.ts <seed> <size>");

const log = (line: string) => process.stderr.write(`${line}\n`);
let manifest = readManifest(seed, size);
let cached = manifest !== null;
if (!manifest) {
  log(`  generating ${size.toLocaleString("en")} messages (seed ${seed}) through the plugin entry…`);
  manifest = await buildDataset(seed, size, log);
  cached = false;
} else if (manifest.compaction.status === "pending") {
  const paths = datasetPaths(seed, size);
  const host = new BenchHost(benchConfig(paths.database, paths.files));
  const compacted = manifest.conversations.find((conversation) => conversation.role === "compacted")!;
  const compaction = await compactOnce(host, compacted, openBenchDatabase({ kind: "sqlite", databasePath: paths.database, filesDirectory: paths.files }));
  closeSharedDatabase(paths.database);
  foldLog(paths.database);
  if (compaction.status === "compacted") {
    log("  swept the cached dataset's compacted conversation (compaction has landed since it was built)");
    manifest = { ...manifest, compaction };
    writeFileSync(paths.manifest, JSON.stringify(manifest, null, 2));
  }
}
console.log(JSON.stringify({ cached, manifest }));
