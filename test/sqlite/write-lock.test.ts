import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/sqlite/connection-registry.js";
import { BUSY_TIMEOUT_MS, isBusyError } from "../../src/sqlite/database.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";

const insert = "INSERT INTO conversations (agent_id, session_id, created_at, updated_at) VALUES ('a', 's', 1, 1)";

describe("taking the write lock", () => {
  it("fails at once when another connection holds it, without SQLite's busy sleeps on the event loop", () => {
    const path = tempDatabasePath();
    const holder = openDatabase(path);
    const writer = openDatabase(path);
    holder.raw.exec("BEGIN IMMEDIATE");
    const attempts = Array.from({ length: 5 }, () => {
      const started = performance.now();
      const error = (() => {
        try {
          writer.writeNow(() => writer.run(insert));
        } catch (caught) {
          return caught;
        }
      })();
      return { error, ms: performance.now() - started };
    });
    holder.raw.exec("ROLLBACK");
    expect(attempts.every((attempt) => isBusyError(attempt.error))).toBe(true);
    // SQLite's busy handler sleeps 1 + 2 + 2 ms before it gives up at BUSY_TIMEOUT_MS; the quickest of five attempts
    // shows whether it ran (a loaded machine can delay any one attempt, not all five).
    expect(Math.min(...attempts.map((attempt) => attempt.ms))).toBeLessThan(BUSY_TIMEOUT_MS - 1);
    holder.close();
    writer.close();
  });

  it("keeps the busy timeout for reads, after a write that got the lock and after one that did not", () => {
    const path = tempDatabasePath();
    const holder = openDatabase(path);
    const writer = openDatabase(path);
    const busyTimeout = () => writer.get<{ timeout: number }>("PRAGMA busy_timeout")!.timeout;
    writer.writeNow(() => writer.run(insert));
    expect(busyTimeout()).toBe(BUSY_TIMEOUT_MS);
    holder.raw.exec("BEGIN IMMEDIATE");
    expect(() => writer.writeNow(() => writer.run(insert))).toThrow();
    holder.raw.exec("ROLLBACK");
    expect(busyTimeout()).toBe(BUSY_TIMEOUT_MS);
    holder.close();
    writer.close();
  });
});
