/**
 * The plugin's operator surfaces as OpenClaw sees them: `openclaw lcm` (registered in every mode, alone in
 * "cli-metadata" where the runtime must not be touched), the lcm.status RPC (a note when a session has no
 * conversation; no database created by asking), and the metrics route, which follows a live metricsEnabled change
 * (404 while off). The registrar, given a commander program as OpenClaw gives its own, runs the same commands on the
 * database OpenClaw's config names.
 */
import { existsSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { Command } from "commander";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import plugin from "../../index.js";
import type { CliCommandDescriptor, CliRegistrar, GatewayMethodHandler, HttpRoute } from "../../src/host/openclaw-types.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runLcm } from "./cli-harness.js";

class OperatorApi extends FakePluginApi {
  readonly clis: { registrar: CliRegistrar; descriptors: CliCommandDescriptor[] }[] = [];
  readonly methods = new Map<string, GatewayMethodHandler>();
  readonly routes: HttpRoute[] = [];
  registerCli(registrar: CliRegistrar, options?: { descriptors?: CliCommandDescriptor[] }): void {
    this.clis.push({ registrar, descriptors: options?.descriptors ?? [] });
  }
  registerGatewayMethod(method: string, handler: GatewayMethodHandler): void {
    this.methods.set(method, handler);
  }
  registerHttpRoute(route: HttpRoute): void {
    this.routes.push(route);
  }
}

afterEach(() => vi.restoreAllMocks());

/** Calls a registered gateway method as OpenClaw does; returns what it answered. */
async function callMethod(api: OperatorApi, method: string, params: Record<string, unknown>) {
  let answer: { ok: boolean; payload?: unknown; error?: unknown } | undefined;
  await api.methods.get(method)!({ params, respond: (ok, payload, error) => { answer = { ok, payload, error }; } });
  return answer!;
}

const servers: Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

/** Serves a registered route on 127.0.0.1 as the gateway would (its auth is the gateway's, not tested here). */
async function serve(route: HttpRoute): Promise<string> {
  const server = createServer((request, response) => void route.handler(request, response));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}${route.path}`;
}

describe("the plugin's operator surfaces", () => {
  it("registers `openclaw lcm`, lcm.status and the metrics route behind the gateway's auth", () => {
    const api = new OperatorApi({ databasePath: tempDatabasePath() });
    plugin.register(api);
    expect(api.clis).toHaveLength(1);
    expect(api.clis[0]!.descriptors).toMatchObject([{ name: "lcm", hasSubcommands: true }]);
    expect(api.clis[0]!.descriptors[0]!.machineOutput!({ argv: ["lcm", "status", "--json"], stdoutIsTTY: true })).toBe(true);
    // `openclaw lcm mcp` over stdio: stdout carries only MCP messages; over --http it is free for notes.
    const machineOutput = (argv: string[]) => api.clis[0]!.descriptors[0]!.machineOutput!({ argv, stdoutIsTTY: false });
    expect(machineOutput(["node", "openclaw", "lcm", "mcp", "--agent", "main"])).toBe(true);
    expect(machineOutput(["node", "openclaw", "lcm", "mcp", "--http", "127.0.0.1:8765", "--agent", "main"])).toBe(false);
    expect(machineOutput(["node", "openclaw", "lcm", "status"])).toBe(false);
    expect([...api.methods.keys()]).toEqual(["lcm.status"]);
    expect(api.routes).toMatchObject([{ path: "/lcm/metrics", auth: "gateway", match: "exact" }]);
  });

  it("serves /lcm/metrics from the next request after metricsEnabled changes, 404 while it is off", async () => {
    const databasePath = tempDatabasePath();
    await buildDatabase({ databasePath, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(2) }] });
    const api = new OperatorApi({ databasePath });
    plugin.register(api);
    const url = await serve(api.routes[0]!);
    const off = await fetch(url);
    expect(off.status).toBe(404);
    expect(await off.text()).toMatch(/LCM metrics are off\. Turn them on with `openclaw config set plugins\.entries\.lcm\.config\.metricsEnabled true`/);
    api.setLiveConfig({ databasePath, metricsEnabled: true });
    const on = await fetch(url);
    expect(on.status).toBe(200);
    expect(await on.text()).toMatch(/^lcm_messages_stored 4$/m);
    api.setLiveConfig({ databasePath, metricsEnabled: false });
    expect((await fetch(url)).status).toBe(404);
  });

  it("answers lcm.status for a session with no conversation with a note saying why", async () => {
    const databasePath = tempDatabasePath();
    await buildDatabase({ databasePath, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(2) }] });
    const api = new OperatorApi({ databasePath });
    plugin.register(api);
    const unknown = await callMethod(api, "lcm.status", { sessionKey: "agent:main:nope" });
    expect(unknown).toMatchObject({ ok: true, payload: { conversation: null, totals: { conversations: 1 } } });
    expect((unknown.payload as { note: string }).note)
      .toMatch(/^No conversation is stored for session key "agent:main:nope" \(agent main\)\. A session has one from the first turn LCM stores/);
    const cron = await callMethod(api, "lcm.status", { sessionKey: "agent:main:cron:nightly:run:1" });
    expect((cron.payload as { note: string }).note).toMatch(/serves this session without storing it \(it matches statelessSessionPatterns\)/);
    const known = await callMethod(api, "lcm.status", { sessionKey: "agent:main:main" });
    expect(known).toMatchObject({ ok: true, payload: { note: null, conversation: { conversationId: 1, spendGuard: { visible: true, calls: 0 } } } });
  });

  it("answers lcm.status without creating the database when there is none yet", async () => {
    const databasePath = tempDatabasePath();
    const api = new OperatorApi({ databasePath });
    plugin.register(api);
    const answer = await callMethod(api, "lcm.status", { sessionKey: "agent:main:main" });
    expect(answer).toMatchObject({ ok: true, payload: { conversation: null, totals: { conversations: 0, messages: 0 } } });
    expect((answer.payload as { note: string }).note).toBe(
      `No LCM database at ${databasePath} yet, so no conversation is stored for what was asked: LCM creates it when it stores its first turn (this call created nothing).`,
    );
    expect(existsSync(databasePath)).toBe(false);
  });

  it("registers only the CLI in cli-metadata mode, without touching the runtime", () => {
    const api = new OperatorApi({ databasePath: tempDatabasePath() }, { registrationMode: "cli-metadata" });
    Object.defineProperty(api, "runtime", { get: () => { throw new Error("runtime is unavailable during cli-metadata"); } });
    plugin.register(api);
    expect(api.clis).toHaveLength(1);
    expect(api.engines.size).toBe(0);
    expect(api.methods.size).toBe(0);
  });

  it("runs `openclaw lcm conversations` on the database named by OpenClaw's config", async () => {
    const db = tempDatabasePath();
    await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(3) }] });
    const api = new OperatorApi({});
    plugin.register(api);
    const program = new Command("openclaw").exitOverride();
    await api.clis[0]!.registrar({ program, config: { plugins: { entries: { lcm: { config: { databasePath: db } } } } } });
    let printed = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    });
    const exitCode = process.exitCode;
    await program.parseAsync(["node", "openclaw", "lcm", "conversations", "--json"]);
    vi.restoreAllMocks();
    expect(process.exitCode).toBe(0);
    process.exitCode = exitCode;
    expect(JSON.parse(printed)).toMatchObject({ databasePath: db, count: 1, conversations: [{ sessionKey: "agent:main:main", messages: 6 }] });
  });

  it("runs `openclaw lcm import jsonl`, whose definition loads only when an import is asked for", async () => {
    const source = tempDatabasePath();
    await buildDatabase({ databasePath: source, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(2) }] });
    const exported = `${source}.jsonl`;
    expect((await runLcm(["export", "1", "--format", "jsonl", "--out", exported, "--db", source])).code).toBe(0);
    const api = new OperatorApi({});
    plugin.register(api);
    const program = new Command("openclaw").exitOverride();
    const target = tempDatabasePath();
    await api.clis[0]!.registrar({ program, config: { plugins: { entries: { lcm: { config: { databasePath: target } } } } } });
    const lcm = program.commands.find((command) => command.name() === "lcm")!;
    const importGroup = lcm.commands.find((command) => command.name() === "import")!;
    expect(importGroup.commands).toEqual([]);
    let printed = "";
    vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    });
    const exitCode = process.exitCode;
    await program.parseAsync(["node", "openclaw", "lcm", "import", "jsonl", exported, "--json"]);
    vi.restoreAllMocks();
    expect(process.exitCode).toBe(0);
    process.exitCode = exitCode;
    expect(importGroup.commands.map((command) => command.name())).toEqual(["jsonl", "openclaw", "lossless-claw"]);
    expect(JSON.parse(printed)).toMatchObject({ dryRun: true });
  });
});
