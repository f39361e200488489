/**
 * One cold open in a fresh process: modules are loaded first (the host's cost, not measured; the PostgreSQL driver
 * too), then the clock runs over register(api), the first engine (which opens and checks the database) and the first
 * assemble.
 * Prints one JSON line. Usage: cold-open-child.ts <database file or postgres:// URL> <files directory> <sessionId> <sessionKey>
 */
import { performance } from "node:perf_hooks";
import { targetConfig, targetOf } from "./bench-database.js";
import { BenchHost } from "./host.js";

const [location, filesDirectory, sessionId, sessionKey] = process.argv.slice(2);
if (!location || !filesDirectory || !sessionId || !sessionKey) throw new Error("usage: cold-open-child.ts <database> <files directory> <sessionId> <sessionKey>");
const target = targetOf(location, filesDirectory);
// The PostgreSQL driver is a module the plugin loads on first use (node:sqlite is loaded with the modules above): loaded
// here, before the clock, so that both backends' figures exclude module loading (50-110 ms for "pg" on a loaded machine).
if (target.kind === "postgres") await import("pg");

const started = performance.now();
const host = new BenchHost(targetConfig(target));
const result = await host.engine().assemble({ sessionId, sessionKey, messages: [], tokenBudget: 32_000 });
const firstAssembleMs = performance.now() - started;
if (host.errors.length > 0) throw new Error(host.errors.join("; "));
console.log(JSON.stringify({ firstAssembleMs, assembledMessages: result.messages.length }));
