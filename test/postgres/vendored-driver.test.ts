/**
 * The published plugin carries pg bundled (scripts/vendor-deps.ts). In OpenClaw 2026.9.6 every module a plugin
 * resolves after it loaded passes the host's resolve hook, which throws once the hook call that started the work has
 * ended ("Plugin invocation scope is closed"). pg required `net` each time it opened a connection, so retention's run
 * on PostgreSQL, which outlives the maintain that starts it, failed whenever the pool had to open a connection
 * (CI, 2026-11-28). Here a child process loads the bundle the way the build makes it, then refuses every later
 * resolution, as the host does, and opens connections to a real server.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { vendorBundle } from "../../scripts/vendor-bundle.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";
import { tempDir } from "../helpers/temp-dir.js";

/** Loads the bundle, then throws on every module resolution, as the host does once the plugin call has ended. */
const CHILD = `
import { registerHooks } from "node:module";
const [bundle, url] = process.argv.slice(1);
const loaded = await import(bundle);
const pg = loaded.default ?? loaded;
const late = [];
registerHooks({ resolve(specifier, context, next) { late.push(specifier); throw new Error("resolved " + specifier + " after loading"); } });
const pool = new pg.Pool({ connectionString: url, max: 3 });
const held = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
const rows = await Promise.all(held.map((client) => client.query("select pg_backend_pid() as pid")));
for (const client of held) client.release(true);
const again = await pool.query("select 1 as one");
await pool.end();
console.log(JSON.stringify({ backends: new Set(rows.map((result) => result.rows[0].pid)).size, again: again.rows[0].one, late }));
`;

describe("the bundled PostgreSQL driver", () => {
  it("opens new connections without resolving any module after it loaded", async () => {
    const url = await createTestPostgresDatabase();
    const out = tempDir();
    await vendorBundle({ pg: "pg" }, out);

    const child = spawnSync(process.execPath, ["--input-type=module", "-e", CHILD, pathToFileURL(join(out, "pg.js")).href, url], { encoding: "utf8", timeout: 60_000 });
    expect(child.stderr, "the child's error output").toBe("");
    // Three connections held at once, then a fourth opened after they were destroyed: each one a new socket.
    expect(JSON.parse(child.stdout)).toEqual({ backends: 3, again: 1, late: [] });
  });
});
