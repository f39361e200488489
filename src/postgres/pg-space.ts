/**
 * How much room LCM takes on a PostgreSQL server, in the words DatabaseSpace and DatabaseFileInfo use: the bytes of
 * LCM's tables with their indexes and TOAST (pg_total_relation_size over the tables of the schema LCM migrated), the
 * part of it their dead rows hold (pg_stat_user_tables: an estimate the statistics collector updates within about a
 * second; autovacuum or VACUUM makes it reusable) and the whole database's size (pg_database_size).
 */
import type { PgQueryable } from "./pg-queryable.js";

export interface PgSpaceFigures {
  /** pg_database_size of the current database (every schema, the catalogs included). */
  databaseBytes: number;
  /** LCM's tables, their indexes and TOAST, less what their dead rows are estimated to hold. */
  usedBytes: number;
  /** What dead rows (deleted or updated, not yet vacuumed) are estimated to hold: reused once vacuumed. */
  freeBytes: number;
}

/**
 * One statement: the tables of the current schema (where lcm_schema_migrations is), each table's dead rows counted
 * at its mean row size (its heap size over its live and dead rows).
 */
export async function pgSpace(database: PgQueryable): Promise<PgSpaceFigures> {
  const row = await database.row<{ database_bytes: number; total_bytes: number; dead_bytes: number }>(
    `SELECT pg_database_size(current_database())::bigint AS database_bytes,
            coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS total_bytes,
            coalesce(sum(CASE WHEN coalesce(st.n_live_tup, 0) + coalesce(st.n_dead_tup, 0) = 0 THEN 0
                         ELSE pg_relation_size(c.oid)::numeric * st.n_dead_tup / (st.n_live_tup + st.n_dead_tup) END), 0)::bigint AS dead_bytes
     FROM pg_class c LEFT JOIN pg_stat_user_tables st ON st.relid = c.oid
     WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')`,
  );
  const total = row?.total_bytes ?? 0;
  const dead = Math.min(total, row?.dead_bytes ?? 0);
  return { databaseBytes: row?.database_bytes ?? 0, usedBytes: total - dead, freeBytes: dead };
}
