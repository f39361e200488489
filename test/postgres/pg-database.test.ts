/**
 * The PostgreSQL connection layer against a real server: text PostgreSQL cannot hold kept losslessly, the schema
 * migrated once when several gateways open the database together (and only read when it is up to date), and an
 * unreachable server reported as a storage failure (so a turn stays in the host's outbox) rather than as a bug.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fromPgText, isPgStorageFailure, PgDatabase, toPgText } from "../../src/postgres/pg-database.js";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from "../../src/postgres/pg-migrations.js";
import { LCM_LOCK_NAMESPACE, type PgStatement, preparedStatement } from "../../src/postgres/pg-queryable.js";
import { PgSearchReader, SEARCH_STATEMENT_TIMEOUT_MS } from "../../src/postgres/pg-search-reader.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";

const opened: PgDatabase[] = [];
const open = (url: string) => {
  const database = new PgDatabase(url, { poolSize: 2 });
  opened.push(database);
  return database;
};

afterEach(async () => {
  for (const database of opened.splice(0)) await database.close();
});

describe("PostgreSQL text", () => {
  it("round-trips NUL, the escape character, U+2028 and astral characters through a text column", async () => {
    const database = open(await createTestPostgresDatabase());
    const samples = ["plain", "a\u0000b", "\uFDD0", "\uFDD00", "x\uFDD01\u0000\uFDD0", "line\u2028sep\u2029para", "emoji 🦀 and 中文", ""];
    for (const [index, text] of samples.entries()) {
      await database.run(
        "INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ($1, $2, 0, 0)", [`agent-${index}`, toPgText(text)],
      );
    }
    const rows = await database.rows<{ session_id: string }>("SELECT session_id FROM conversations ORDER BY conversation_id");
    expect(rows.map((row) => fromPgText(row.session_id))).toEqual(samples);
  });
});

describe("PostgreSQL schema", () => {
  it("is migrated once when several pools open a new database at the same time", async () => {
    const url = await createTestPostgresDatabase();
    const pools = [open(url), open(url), open(url), open(url)];
    await Promise.all(pools.map((database) => database.ready()));
    const versions = await pools[0]!.rows<{ version: number }>("SELECT version FROM lcm_schema_migrations ORDER BY version");
    expect(versions.map((row) => row.version)).toEqual(PG_MIGRATIONS.map((migration) => migration.version));
  });

  it("opens an up-to-date database with a read of its version, without the migration lock", async () => {
    const url = await createTestPostgresDatabase();
    const first = open(url);
    await first.ready();
    // Another gateway holds the migration lock: a schema at this build's version is read and used without waiting for it.
    await first.transaction(async (tx) => {
      await tx.run("SELECT pg_advisory_xact_lock($1, 0)", [LCM_LOCK_NAMESPACE]);
      const second = open(url);
      await second.ready();
      expect(await second.row("SELECT max(version) AS version FROM lcm_schema_migrations")).toEqual({ version: PG_SCHEMA_VERSION });
    });
  });

  it("answers lcm_json_type (the integrity checks' JSON test) in a parallel plan, as a large table's scan gets", async () => {
    const database = open(await createTestPostgresDatabase());
    await database.ready();
    const types = await database.transaction(async (tx) => {
      // Plans run in parallel mode whenever they may: the function catches errors in a subtransaction, which parallel mode forbids.
      const version = Number((await tx.row<{ version: string }>("SHOW server_version_num"))!.version);
      await tx.run(`SET LOCAL ${version >= 160_000 ? "debug_parallel_query" : "force_parallel_mode"} = on`);
      return tx.rows("SELECT lcm_json_type(value) AS type FROM (VALUES ('{}'), ('[1]'), ('not json')) AS checked (value)");
    });
    expect(types).toEqual([{ type: "object" }, { type: "array" }, { type: null }]);
  });

  it("refuses a database a newer build migrated, naming both versions", async () => {
    const url = await createTestPostgresDatabase();
    const first = open(url);
    await first.ready();
    await first.run("INSERT INTO lcm_schema_migrations (version, name, applied_at) VALUES ($1, 'from the future', 0)", [PG_SCHEMA_VERSION + 1]);
    await expect(open(url).ready()).rejects.toThrow(`version ${PG_SCHEMA_VERSION + 1}, newer than this build's ${PG_SCHEMA_VERSION}`);
  });
});

describe("prepared statements", () => {
  it("are prepared once per connection under their name, and answer like the same text unprepared", async () => {
    const database = open(await createTestPostgresDatabase());
    const statement = preparedStatement("SELECT $1::bigint + 1 AS next");
    const other = preparedStatement("SELECT $1::text || '!' AS said");
    const seen = await database.transaction(async (tx) => {
      const answers = [await tx.row<{ next: number }>(statement, [1]), await tx.row<{ next: number }>(statement, [41]), await tx.row<{ said: string }>(other, ["hi"])];
      const prepared = await tx.rows<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements ORDER BY name");
      return { answers, prepared };
    });
    expect(seen.answers).toEqual([{ next: 2 }, { next: 42 }, { said: "hi!" }]);
    expect(seen.prepared).toEqual([{ name: statement.name, statement: statement.text }, { name: other.name, statement: other.text }].sort((a, b) => a.name.localeCompare(b.name)));
    expect(await database.row<{ next: number }>(statement, [9])).toEqual({ next: 10 });
    expect(statement.name).not.toBe(other.name);
  });
});

describe("plans of prepared statements", () => {
  // Shaped like the search's look-ups: arrays unnested, each element joined to an index (pg-text-search.ts).
  const lookUpText = `SELECT t.position, c.conversation_id FROM unnest($1::int[], $2::text[]) AS t (position, agent)
    CROSS JOIN LATERAL (SELECT conversation_id FROM conversations WHERE agent_id = t.agent ORDER BY conversation_id LIMIT 3) c`;
  const plansOf = (name: string) => `SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = '${name}'`;
  // One connection per pool, so that every run and the read of its counts meet on the same session.
  const openSingle = async () => {
    const database = new PgDatabase(await createTestPostgresDatabase(), { poolSize: 1 });
    opened.push(database);
    return database;
  };

  it("declared generic, are planned once per connection for every value", async () => {
    const database = await openSingle();
    const lookUp = preparedStatement(lookUpText, { plan: "generic" });
    for (let run = 0; run < 7; run++) expect(await database.rows(lookUp, [[run], [`agent-${run}`]])).toEqual([]);
    // Read through a statement of the same kind: it runs where the look-up ran. Seven runs of the one generic plan
    // (PostgreSQL counts its uses), none planned for its values.
    const counts = await database.row(preparedStatement(plansOf(lookUp.name), { plan: "generic" }));
    expect(counts).toEqual({ generic: 7, custom: 0 });
  });

  it("left to PostgreSQL, a read over arrays is planned for its values on every run (why the look-ups are declared generic)", async () => {
    const database = await openSingle();
    const lookUp = preparedStatement(lookUpText);
    for (let run = 0; run < 7; run++) await database.rows(lookUp, [[run], [`agent-${run}`]]);
    expect(await database.row(plansOf(lookUp.name))).toEqual({ generic: 0, custom: 7 });
  });

  it("force generic plans only on the statements declared generic, on sessions that keep the pool's own settings", async () => {
    const database = open(await createTestPostgresDatabase());
    const search = new PgSearchReader(database);
    const setting = preparedStatement("SELECT current_setting($1) AS value", { plan: "generic" });
    const value = async (reads: PgDatabase, sql: string | PgStatement, name: string) => (await reads.row<{ value: string }>(sql, [name]))!.value;
    expect(await value(database, "SELECT current_setting($1) AS value", "plan_cache_mode")).toBe("auto");
    expect(await value(database, setting, "plan_cache_mode")).toBe("force_generic_plan");
    expect(await value(search.pool, "SELECT current_setting($1) AS value", "plan_cache_mode")).toBe("auto");
    expect(await value(search.pool, setting, "plan_cache_mode")).toBe("force_generic_plan");
    expect(await value(search.pool, setting, "enable_seqscan")).toBe("off");
    expect(await value(search.pool, setting, "jit")).toBe("off");
    expect(await value(search.pool, setting, "statement_timeout")).toBe(`${SEARCH_STATEMENT_TIMEOUT_MS / 1000}s`);
  });
});

describe("an unreachable server", () => {
  it("fails statements with an error the engine counts as a storage failure", async () => {
    const database = open("postgres://postgres@127.0.0.1:1/nowhere");
    const error = await database.rows("SELECT 1").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect(isPgStorageFailure(error)).toBe(true);
    expect(isPgStorageFailure(new Error("syntax error at or near"))).toBe(false);
  });
});

describe("session settings", () => {
  it("runs every pool without JIT compilation, and the search pool without sequential scans where an index serves", async () => {
    const url = await createTestPostgresDatabase();
    const database = open(url);
    const search = new PgSearchReader(database);
    const setting = async (reads: { row<Row extends object>(sql: string): Promise<Row | null> }, name: string) =>
      (await reads.row<{ value: string }>(`SELECT current_setting('${name}') AS value`))!.value;
    expect(await setting(database, "jit")).toBe("off");
    expect(await setting(database, "enable_seqscan")).toBe("on");
    expect(await setting(search.pool, "jit")).toBe("off");
    expect(await setting(search.pool, "enable_seqscan")).toBe("off");
    expect(await setting(search.pool, "statement_timeout")).toBe(`${SEARCH_STATEMENT_TIMEOUT_MS / 1000}s`);
  });
});
