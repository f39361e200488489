/**
 * Versioned schema migrations, tracked with PRAGMA user_version. Each runs in its own transaction; a shipped
 * migration is never edited (add a new one). When the database is up to date, `migrate` reads one pragma and
 * returns. The data model is described in docs/architecture.md.
 */
import type { Database } from "./database.js";
import { hasStoredHours } from "./stored-hours.js";
import type { Migration } from "./migration.js";
import { MIGRATIONS_1_TO_7 } from "./migrations-1-to-7.js";
import { MIGRATIONS_8_TO_16 } from "./migrations-8-to-16.js";
import { MIGRATIONS_17_ON } from "./migrations-17-on.js";
import { databaseUnavailableError } from "./database-problem.js";

export type { Migration } from "./migration.js";

/** Every migration, in order: 1-7, 8-16 and 17 on each in a file of its own (spec 026, R8). */
export const MIGRATIONS: readonly Migration[] = [...MIGRATIONS_1_TO_7, ...MIGRATIONS_8_TO_16, ...MIGRATIONS_17_ON];

/**
 * Brings the schema up to date. Cheap when already current: one pragma read (and one schema lookup, for whether
 * writes mark when they stored messages). Migrations run once per process when the first engine opens the file;
 * openDatabase retries the whole open while another process holds the lock.
 */
export function migrate(db: Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const current = currentVersion(db);
  const latest = migrations.at(-1)?.version ?? 0;
  if (current > latest) {
    throw databaseUnavailableError(db.path, { kind: "newer-schema", schemaVersion: current, supportedVersion: latest });
  }
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    if (migration.rebuildsReferencedTable) db.raw.exec("PRAGMA foreign_keys = OFF");
    try {
      db.writeNow(() => {
        // Re-check inside the write lock: another process may have migrated meanwhile.
        if (currentVersion(db) >= migration.version) return;
        db.raw.exec(migration.up);
        db.raw.exec(`PRAGMA user_version = ${migration.version}`);
      });
    } finally {
      if (migration.rebuildsReferencedTable) db.raw.exec("PRAGMA foreign_keys = ON");
    }
  }
  db.marksStoredHours = hasStoredHours(db.raw);
  return latest;
}

function currentVersion(db: Database): number {
  return Number((db.raw.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
}
