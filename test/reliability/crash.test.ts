import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../../src/contracts.js";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { IntegrityChecker } from "../../src/integrity/integrity-checker.js";
import { SqliteIntegrityStore } from "../../src/sqlite/sqlite-integrity-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runChild, seededRandom } from "./child-process.js";

const ITERATIONS = Number(process.env.LCM_CRASH_ITERATIONS ?? 200);
const SEED = Number(process.env.LCM_CRASH_SEED ?? 20261122);

/** Turn number → how many of its marker messages are stored (user, result, answer: 3 when the turn is whole). */
function storedTurns(databasePath: string): Map<number, number> {
  const database = openDatabase(databasePath);
  try {
    const counts = new Map<number, number>();
    for (const row of database.all<{ content: string }>("SELECT content FROM messages")) {
      const turn = /turn-(\d+)-/.exec(row.content)?.[1];
      if (turn !== undefined) counts.set(Number(turn), (counts.get(Number(turn)) ?? 0) + 1);
    }
    return counts;
  } finally {
    database.close();
  }
}

async function integrityFindings(databasePath: string) {
  const database = openDatabase(databasePath);
  try {
    const checker = new IntegrityChecker({
      store: new SqliteIntegrityStore(database), clock: systemClock, fileExists: async (path) => existsSync(path),
    });
    return await checker.check();
  } finally {
    database.close();
  }
}

describe("crash safety", () => {
  it(`survives ${ITERATIONS} SIGKILLs at random points without losing or duplicating an acknowledged message`, async () => {
    const random = seededRandom(SEED);
    const databasePath = join(tempDir(), "crash.db");
    const acked = new Set<number>();
    let nextTurn = 1;
    let kills = 0;
    let checks = 0;
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      // Sometimes replay the last turns (the host retries after a crash), always continue beyond them.
      const first = Math.max(1, nextTurn - Math.floor(random() * 3));
      const mode = ["commit", "ingest", "mixed"][Math.floor(random() * 3)]!;
      // One run in ten is killed during start-up (module load, migration); the rest while serving turns.
      const duringStartup = random() < 0.1;
      const killAfter = duringStartup ? Math.floor(random() * 1_500) : Math.floor(random() * 400);
      const run = await runChild([databasePath, "crash-session", String(first), String(first + 300), mode], killAfter, duringStartup);
      if (run.killed) kills++;
      for (const turn of run.acked) acked.add(turn);
      nextTurn = Math.max(nextTurn, ...run.acked.map((turn) => turn + 1));
      expect(run.stderr).toBe("");

      const turns = storedTurns(databasePath);
      for (const turn of acked) expect(turns.get(turn), `acknowledged turn ${turn}`).toBe(3);
      for (const [turn, count] of turns) expect(count, `turn ${turn} stored whole and once`).toBe(3);
      const report = await integrityFindings(databasePath);
      checks += report.checksRun;
      expect(report.findings).toEqual([]);
    }
    const database = openDatabase(databasePath);
    const summaries = database.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n;
    const files = database.get<{ n: number }>("SELECT count(*) AS n FROM large_files")!.n;
    database.close();
    console.log(
      `crash suite: seed ${SEED}, ${ITERATIONS} child runs, ${kills} SIGKILLs, ${acked.size} acknowledged turns ` +
        `(${acked.size * 4} messages) all present once, ${summaries} summaries written by compaction and ${files} large files stored aside in between, ` +
        `${checks} invariant checks passed`,
    );
    expect(summaries).toBeGreaterThan(0);
    expect(files).toBeGreaterThan(0);
    expect(kills).toBeGreaterThan(ITERATIONS * 0.6);
  });
});
