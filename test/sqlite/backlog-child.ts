/**
 * A gateway process for the backlog worker's crash test (backlog-index-thread.test.ts): opens the database given as
 * its argument, hands its backlog to the worker, says STARTED, and idles until it is killed.
 */
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { SqliteSearchIndex } from "../../src/sqlite/sqlite-search-index.js";

const backend = openSqliteBackend(process.argv[2]!, "shared");
const quiet = { debug: () => {}, info: () => {}, warn: (message: string) => console.error(message), error: (message: string) => console.error(message) };
await (backend.searchIndex as SqliteSearchIndex).indexBacklogInBackground(quiet, 1);
console.log("STARTED");
setInterval(() => {}, 1_000);
