/**
 * Bytes written per byte of text for a chunk size on the backlog path (spec 030, 3a): indexes LIMIT messages of a
 * copy of a dataset with its indexes emptied, chunks of ROWS rows and BUDGET ms analysed inside their transaction.
 * `npx tsx bench/pace-probe.mts <dataset.db> <rows> <budgetMs> <limit>` (the copy is /tmp/pace.db).
 */
import { copyFileSync, readFileSync } from "node:fs";
import { openDatabase } from "../src/sqlite/connection-registry.js";
import { SqliteSearchIndex } from "../src/sqlite/sqlite-search-index.js";
const written = () => Number(/write_bytes:\s*(\d+)/.exec(readFileSync("/proc/self/io", "utf8"))![1]);
const [rows, budget, limit] = process.argv.slice(3).map(Number);
copyFileSync(process.argv[2]!, "/tmp/pace.db");
const db = openDatabase("/tmp/pace.db");
db.raw.exec("PRAGMA synchronous = NORMAL");
const index = new SqliteSearchIndex(db);
await index.rebuild("messages_fts");
const w0 = written(); const t0 = performance.now(); let cpu0 = process.cpuUsage();
let n = 0; let slices = 0;
await index.indexBacklog({ rows, budgetMs: budget, shouldStop: () => n >= limit, holds: () => { slices++; n = index.through("messages_fts"); return true; } });
const cpu = process.cpuUsage(cpu0);
const text = db.get<{ b: number }>("SELECT sum(length(content)) b FROM messages WHERE message_id <= ?", index.through("messages_fts"))!.b;
console.log({ rows, budget, indexed: index.through("messages_fts"), slices, s: ((performance.now() - t0) / 1000).toFixed(1), cpuS: ((cpu.user + cpu.system) / 1e6).toFixed(1), writtenPerText: ((written() - w0) / text).toFixed(1) });
