import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresBackend } from "/work/wt/pg-search/src/postgres/open-postgres-backend.js";
import { PgDatabase } from "/work/wt/pg-search/src/postgres/pg-database.js";
import { openSqliteBackend } from "/work/wt/pg-search/src/sqlite/open-sqlite-backend.js";
import { grep } from "/work/wt/pg-search/src/search/grep.js";
import { LargeFileReader } from "/work/wt/pg-search/src/large-files/large-file-reader.js";

const N = Number(process.argv[2] ?? 20000);
const WORDS = "the a deploy build billing service engine context factory request timeout cache error warning index search ranking migration database query vault key token session agent summary compaction message tool output result".split(" ");
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
function text(i: number): string {
  const parts: string[] = [];
  const n = 8 + Math.floor(rand() * 40);
  for (let k = 0; k < n; k++) {
    const r = rand();
    parts.push(r < 0.8 ? WORDS[Math.floor(rand() * WORDS.length)]! : r < 0.9 ? `${Math.floor(rand() * 5000)}ms` : `Handler${Math.floor(rand() * 2000)}Factory`);
  }
  if (i === 7) parts.push("zebra-7731");
  return parts.join(" ");
}
const texts = Array.from({ length: N }, (_, i) => text(i));

async function run(kind: "sqlite" | "postgres") {
  let backend;
  let insert: () => Promise<void>;
  if (kind === "sqlite") {
    const path = join(mkdtempSync(join(tmpdir(), "pgsb-")), "lcm.db");
    const b = openSqliteBackend(path, "private");
    backend = b;
    insert = async () => {
      await b.database.write(() => {
        b.database.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a','s',1,1)");
        texts.forEach((t, i) => b.database.run("INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) VALUES (1, ?, 'user', ?, 1, ?, ?)", i + 1, t, i + 1, `k${i}`));
      });
    };
  } else {
    const server = (await import("node:fs")).readFileSync("/tmp/pgsearch/url", "utf8");
    const admin = new PgDatabase(server, { poolSize: 1 });
    const name = `bench_${Date.now()}`;
    await (await admin.pool()).query(`CREATE DATABASE ${name}`);
    await admin.close();
    const url = new URL(server); url.pathname = `/${name}`;
    const b = openPostgresBackend(url.toString(), "private");
    backend = b;
    insert = async () => {
      await b.database.run("INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a','s',1,1)");
      for (let from = 0; from < N; from += 5000) {
        const slice = texts.slice(from, from + 5000);
        await b.database.run(
          "INSERT INTO messages (conversation_id, seq, role, content, token_count, created_at, identity_key) SELECT 1, s, 'user', c, 1, s, 'k' || s FROM unnest($1::bigint[], $2::text[]) AS t(s, c)",
          [slice.map((_, i) => from + i + 1), slice],
        );
      }
    };
  }
  await insert();
  let t = performance.now();
  await backend.searchIndex.indexPending();
  const indexMs = performance.now() - t;
  const files = new LargeFileReader({ store: backend.store });
  const q = async (pattern: string, mode: "regex" | "full_text", sort: "recency" | "relevance") => {
    const times: number[] = [];
    let result;
    for (let r = 0; r < 5; r++) {
      const s = performance.now();
      result = await grep(backend.retrieval, { pattern, mode, scope: "messages", conversationIds: [1], since: null, before: null, limit: 20, sort }, { now: 1, regexBudgetMs: 10000, files });
      times.push(performance.now() - s);
    }
    times.sort((a, b) => a - b);
    return `${pattern}/${mode}/${sort}: median ${times[2]!.toFixed(1)} ms, ${result!.matches.length} matches, first ${(result!.matches as { seq?: number }[]).slice(0, 5).map((m) => m.seq).join(",")}`;
  };
  const lines = [
    await q("zebra-7731", "regex", "recency"),
    await q("Handler1234", "full_text", "relevance"),
    await q("deploy billing", "full_text", "relevance"),
    await q("deploying", "full_text", "recency"),
    await q("1234 ms", "full_text", "relevance"),
    await q("timeout \\d+ms", "regex", "recency"),
  ];
  console.log(`${kind}: ${N} messages indexed in ${indexMs.toFixed(0)} ms (${(N / (indexMs / 1000)).toFixed(0)} rows/s)`);
  for (const line of lines) console.log(`  ${line}`);
  backend.close();
}
await run("sqlite");
await run("postgres");
process.exit(0);
