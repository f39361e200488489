/**
 * The bench's backlog.index phase (bench/phases/backlog-index.ts) on any database file, outside a bench run: the
 * file is copied, its indexes emptied, and the backlog worker indexes it all again while lcm_grep runs every second.
 * Prints the phase's figures with the load average before and after.
 * `npx tsx bench/backlog-block.ts <dataset.db>` (a cached dataset of the current or an older schema). The copy is
 * made beside the dataset, whose stored files are recorded relative to its folder; what it stores aside goes to a
 * directory of its own.
 */
import { copyFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { closeSharedDatabase } from "../src/sqlite/connection-registry.js";
import { copyFilesDirectory, removeDatabase } from "./dataset.js";
import { measureBacklogIndexing } from "./phases/backlog-index.js";

const source = process.argv[2];
if (!source) throw new Error("usage: npx tsx bench/backlog-block.ts <dataset.db>");
const path = join(dirname(source), `backlog-block-${process.pid}.db`);
copyFileSync(source, path);
const loadBefore = loadavg()[0]!;
try {
  const result = await measureBacklogIndexing(path, copyFilesDirectory(path), (line) => process.stderr.write(`${line}\n`));
  console.log(JSON.stringify({ ...result, loadAverage: { before: loadBefore, after: loadavg()[0] } }, null, 1));
} finally {
  closeSharedDatabase(path);
  removeDatabase(path);
}
