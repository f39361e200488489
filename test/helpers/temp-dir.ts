/** Temporary directories removed after each test file, and a fresh database path inside one. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { closeAllDatabases } from "../../src/sqlite/connection-registry.js";

const created: string[] = [];

afterAll(() => {
  closeAllDatabases();
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix = "lcm-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function tempDatabasePath(): string {
  return join(tempDir(), "lcm.db");
}
