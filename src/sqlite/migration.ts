/** One schema migration: its version (PRAGMA user_version after it), a name, and the SQL it runs. */
export interface Migration {
  version: number;
  name: string;
  up: string;
  /**
   * Rebuilds a table other tables reference (copy, drop, rename, keeping every row id): foreign-key enforcement is
   * switched off around the migration's transaction (SQLite ignores that pragma inside one), or the DROP would fail.
   */
  rebuildsReferencedTable?: boolean;
}
