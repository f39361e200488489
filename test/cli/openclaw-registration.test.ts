/**
 * The plugin's operator surfaces as OpenClaw sees them: `openclaw lcm` (registered in every mode, alone in
 * "cli-metadata" where the runtime must not be touched), the lcm.status RPC, and the metrics route only when
 * metricsEnabled is set. The registrar, given a commander program as OpenClaw gives its own, runs the same commands
 * on the database OpenClaw's config names.
 */
import { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import plugin from "../../index.js";
import type { CliCommandDescriptor, CliRegistrar, GatewayMethodHandler, HttpRoute } from "../../src/host/openclaw-types.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges } from "./cli-harness.js";

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

describe("the plugin's operator surfaces", () => {
  it("registers `openclaw lcm`, lcm.status, and no metrics route unless enabled", () => {
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
    expect(api.routes).toEqual([]);
  });

  it("serves /lcm/metrics behind the gateway's auth when metricsEnabled is set", () => {
    const api = new OperatorApi({ databasePath: tempDatabasePath(), metricsEnabled: true });
    plugin.register(api);
    expect(api.routes).toMatchObject([{ path: "/lcm/metrics", auth: "gateway", match: "exact" }]);
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
});
