/**
 * The backlog indexer's lease (schema version 17, `index_worker_lease`): which process's worker thread indexes a
 * backlog, so two gateways on one file do not both do it. The holder renews it inside each slice it commits; a
 * holder that stops renewing loses it when it expires, or at once when its process is gone from this host (a killed
 * gateway: the next one resumes without waiting). Correctness never depends on it: the index's watermark is read
 * inside each slice's transaction (sqlite-search-index.ts), so two indexers would only repeat a lookup, never a row.
 */
import { hostname } from "node:os";
import type { Database } from "./database.js";

/** How long a lease lasts without renewal (a slice renews it every few tens of ms while it indexes). */
export const LEASE_MS = 30_000;
const NAME = "backlog";


/** Who holds the lease now, or null when nobody does (never taken, released, expired, or its process is gone). */
export function leaseHolderNow(db: Database, now = Date.now()): string | null {
  const row = db.get<{ holder: string; expires_at: number }>("SELECT holder, expires_at FROM index_worker_lease WHERE name = ?", NAME);
  if (!row || row.expires_at < now || isGone(row.holder)) return null;
  return row.holder;
}

/**
 * Inside a write transaction: takes or renews the lease for `holder`; false when another live holder has it.
 */
export function holdLease(db: Database, holder: string, now = Date.now()): boolean {
  const current = leaseHolderNow(db, now);
  if (current !== null && current !== holder) return false;
  db.run(
    `INSERT INTO index_worker_lease (name, holder, expires_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`,
    NAME, holder, now + LEASE_MS,
  );
  return true;
}

/** Inside a write transaction: gives the lease up, if `holder` has it. */
export function releaseLease(db: Database, holder: string): void {
  db.run("DELETE FROM index_worker_lease WHERE name = ? AND holder = ?", NAME, holder);
}

/** A holder on this host whose process no longer runs. */
function isGone(holder: string): boolean {
  const parts = holder.split(":"); // host:pid:random, the host name possibly holding colons
  const pid = parts.at(-2);
  if (parts.slice(0, -2).join(":") !== hostname() || !pid) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    // EPERM: the process runs under another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}
