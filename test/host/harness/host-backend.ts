/**
 * Which backend the plugin stores in during `npm run test:host`: SQLite (the default, a file per suite) or, with
 * `LCM_HOST_BACKEND=postgres`, PostgreSQL. The global setup then starts one server on 127.0.0.1 for the run
 * (test/postgres/postgres-server.ts, stopped by PID in the teardown) and each suite gets a database of its own on it,
 * named after the suite's folder, which it passes to the plugin as `databaseUrl`.
 */
import { basename } from "node:path";
import type {} from "vitest";

export type HostBackend = "sqlite" | "postgres";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's PostgreSQL server (postgres://…/postgres), or null on SQLite. */
    hostPostgresUrl: string | null;
  }
}

export function hostBackendFromEnvironment(value = process.env.LCM_HOST_BACKEND): HostBackend {
  const backend = value?.trim() || "sqlite";
  if (backend !== "sqlite" && backend !== "postgres") {
    throw new Error(`LCM_HOST_BACKEND must be "sqlite" or "postgres", got ${JSON.stringify(value)}.`);
  }
  return backend;
}

/** The backend of this run. */
export const HOST_BACKEND: HostBackend = hostBackendFromEnvironment();
export const ON_POSTGRES = HOST_BACKEND === "postgres";

/** Creates the suite's own database on the run's server and returns its URL. */
export async function createSuiteDatabase(suiteDir: string): Promise<string> {
  const { inject } = await import("vitest"); // loaded in test workers only, never by the global setup
  const serverUrl = inject("hostPostgresUrl");
  if (!serverUrl) throw new Error("LCM_HOST_BACKEND=postgres, but the global setup started no PostgreSQL server.");
  const name = `lcm_${basename(suiteDir).toLowerCase().replace(/[^a-z0-9]+/g, "_")}`;
  const pg = (await import("pg")).default;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`); // the name is made of [a-z0-9_] above: safe to write into the SQL
  } finally {
    await admin.end();
  }
  return serverUrl.replace(/\/postgres$/, `/${name}`);
}
