/**
 * Setup of `npm run test:postgres`: one real PostgreSQL server on 127.0.0.1 for the run (Debian's packages, installed
 * when missing), stopped by its PID at the end. Tests reach it through LCM_TEST_POSTGRES_URL and each opens a database
 * of its own on it (test/helpers/backends.ts).
 */
import { startPostgres, type PostgresServer } from "./postgres-server.js";

let server: PostgresServer | null = null;

export async function setup(): Promise<void> {
  server = await startPostgres({ log: (line) => console.log(`[test:postgres] ${line}`) });
  process.env.LCM_TEST_POSTGRES_URL = server.url;
  process.env.LCM_TEST_BACKENDS = process.env.LCM_TEST_BACKENDS ?? "postgres";
  console.log(`[test:postgres] PostgreSQL on ${server.url} (pid ${server.pid})`);
}

export async function teardown(): Promise<void> {
  await server?.stop();
}
