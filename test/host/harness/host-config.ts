/**
 * The openclaw.json of an isolated test HOME. It points OpenClaw at the fake model, loads the plugin built from
 * the repository (`plugins.load.paths`, the staged copy described in paths.ts), selects a context engine, and trims the host (minimal tool
 * profile, no other plugins, bootstrap files, bundled skills, memory flush or heartbeat) so that a small context
 * window is usable and compaction comes within a few turns.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_MODEL_ID } from "../fake-model-server.js";
import { PLUGIN_STAGE_DIR } from "./paths.js";

export const PLUGIN_ID = "lcm";
export const FAKE_PROVIDER_ID = "fake";

export interface HostConfigOptions {
  /** OpenClaw's log file (`logging.file`); kept in the suite's folder instead of /tmp/openclaw. */
  logFile: string;
  workspaceDir: string;
  gatewayPort: number;
  gatewayToken: string;
  modelBaseUrl: string;
  /** The fake model's context window; the host derives assemble's token budget from it. */
  contextWindow: number;
  maxOutputTokens: number;
  /** The engine in plugins.slots.contextEngine: ours, or OpenClaw's built-in one. */
  contextEngine: typeof PLUGIN_ID | "legacy";
  /** plugins.entries.lcm.config */
  pluginConfig: Record<string, unknown>;
  /** Host tools offered beside the plugin's (tools.alsoAllow). */
  extraTools?: string[];
  /** Replaces the trimmed tool policy (minimal profile plus the plugin's tools) with this `tools` block. */
  tools?: Record<string, unknown>;
  /** agents.entries: per-agent overrides (each agent's own tool profile, for instance). */
  agentEntries?: Record<string, Record<string, unknown>>;
  /** More of agents.defaults.compaction (OpenClaw's own settings, e.g. `midTurnPrecheck`). */
  hostCompaction?: Record<string, unknown>;
}

/** The tools the plugin declares (manifest contracts.tools): the minimal profile admits only these. */
export function declaredPluginTools(): string[] {
  const manifest = JSON.parse(readFileSync(join(PLUGIN_STAGE_DIR, "openclaw.plugin.json"), "utf8")) as {
    contracts?: { tools?: string[] };
  };
  return manifest.contracts?.tools ?? [];
}

export function hostConfig(options: HostConfigOptions): Record<string, unknown> {
  return {
    logging: { file: options.logFile },
    gateway: {
      mode: "local",
      port: options.gatewayPort,
      bind: "loopback",
      auth: { mode: "token", token: options.gatewayToken },
    },
    agents: {
      defaults: {
        model: { primary: `${FAKE_PROVIDER_ID}/${FAKE_MODEL_ID}` },
        workspace: options.workspaceDir,
        skipBootstrap: true,
        heartbeat: { every: "0m" },
        compaction: { memoryFlush: { enabled: false }, ...(options.hostCompaction ?? {}) },
      },
      ...(options.agentEntries ? { entries: options.agentEntries } : {}),
    },
    models: {
      mode: "merge",
      providers: {
        [FAKE_PROVIDER_ID]: {
          baseUrl: options.modelBaseUrl,
          apiKey: "fake-local-key",
          api: "openai-completions",
          models: [{
            id: FAKE_MODEL_ID,
            name: "Fake model",
            reasoning: false,
            input: ["text"],
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
            contextWindow: options.contextWindow,
            maxTokens: options.maxOutputTokens,
          }],
        },
      },
    },
    tools: options.tools ?? { profile: "minimal", alsoAllow: [...declaredPluginTools(), ...(options.extraTools ?? [])], toolSearch: false },
    skills: { allowBundled: [] },
    plugins: {
      // Only this plugin: the bundled ones (browser, canvas, providers…) double the gateway's start time.
      allow: [PLUGIN_ID],
      load: { paths: [PLUGIN_STAGE_DIR] },
      slots: { contextEngine: options.contextEngine, memory: "none" },
      entries: { [PLUGIN_ID]: { enabled: true, config: options.pluginConfig } },
    },
  };
}

/** Writes `$HOME/.openclaw/openclaw.json`. */
export function writeHostConfig(home: string, config: Record<string, unknown>): string {
  const dir = join(home, ".openclaw");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "openclaw.json");
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`);
  return path;
}
