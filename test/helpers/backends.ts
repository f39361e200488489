/**
 * The backends a contract test runs on. `npm test` runs SQLite only; `npm run test:postgres` starts a PostgreSQL
 * server and runs PostgreSQL (LCM_TEST_BACKENDS=sqlite,postgres runs both). Each `openTestBackend` is a new, empty
 * database: a SQLite file in a temporary folder, or a new database on the test server.
 */
import { randomBytes } from "node:crypto";
import { openPostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { LcmBackend } from "../../src/store/backend.js";
import { tempDatabasePath } from "./temp-dir.js";

export type BackendKind = "sqlite" | "postgres";

/** The kinds this run tests, from LCM_TEST_BACKENDS (default: sqlite). */
export function backendKinds(): BackendKind[] {
  const kinds = (process.env.LCM_TEST_BACKENDS ?? "sqlite").split(",").map((kind) => kind.trim()).filter(Boolean);
  for (const kind of kinds) if (kind !== "sqlite" && kind !== "postgres") throw new Error(`LCM_TEST_BACKENDS: unknown backend "${kind}"`);
  return kinds as BackendKind[];
}

export interface TestBackend {
  kind: BackendKind;
  backend: LcmBackend;
  /** Where a second opening (another gateway, the CLI) finds the same data: a file path or a postgres:// URL. */
  location: string;
  /** Opens the same database again, as another process would (its own connection or pool). */
  reopen(): LcmBackend;
  close(): Promise<void>;
}

/** The test server's URL; throws outside `npm run test:postgres`. */
export function testPostgresUrl(): string {
  const url = process.env.LCM_TEST_POSTGRES_URL;
  if (!url) throw new Error("LCM_TEST_POSTGRES_URL is not set: PostgreSQL tests run under `npm run test:postgres`, which starts the server");
  return url;
}

/** A new, empty database on the test server; returns its URL. */
export async function createTestPostgresDatabase(): Promise<string> {
  const serverUrl = testPostgresUrl();
  const name = `lcm_test_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  const admin = new PgDatabase(serverUrl, { poolSize: 1 });
  try {
    await (await admin.pool()).query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.close();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function openTestBackend(kind: BackendKind): Promise<TestBackend> {
  const opened: LcmBackend[] = [];
  const track = (backend: LcmBackend) => (opened.push(backend), backend);
  const closeAll = async () => {
    for (const backend of opened.splice(0)) await backend.close();
  };
  if (kind === "sqlite") {
    const path = tempDatabasePath();
    return { kind, location: path, backend: track(openSqliteBackend(path, "private")), reopen: () => track(openSqliteBackend(path, "private")), close: closeAll };
  }
  const url = await createTestPostgresDatabase();
  return { kind, location: url, backend: track(openPostgresBackend(url, "private")), reopen: () => track(openPostgresBackend(url, "private")), close: closeAll };
}
