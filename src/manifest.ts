/**
 * The plugin manifest (openclaw.plugin.json), derived from the settings table so the configSchema, uiHints and
 * declared tools can never drift from the code. `npm run manifest` writes it; test/manifest.test.ts fails when
 * the committed file differs.
 */
import { SETTINGS, type SettingSpec } from "./config.js";

/** Every tool the plugin registers; OpenClaw rejects tools missing from contracts.tools. */
export const DECLARED_TOOLS: readonly string[] = [];

function schemaOf(setting: SettingSpec): Record<string, unknown> {
  const schema: Record<string, unknown> = { type: setting.type, description: setting.help };
  if (setting.defaultValue !== undefined) schema.default = setting.defaultValue;
  if (setting.min !== undefined) schema[setting.exclusiveMin ? "exclusiveMinimum" : "minimum"] = setting.min;
  if (setting.max !== undefined) schema.maximum = setting.max;
  if (setting.type === "string") schema.minLength = 1;
  return schema;
}

export function buildManifest(): Record<string, unknown> {
  return {
    id: "lcm",
    name: "Lossless Context Management",
    description:
      "Lossless context engine: every message persisted in SQLite, older turns summarized into a DAG, summaries " +
      "plus a fresh tail assembled within budget, and recall tools (lcm_grep, lcm_describe, lcm_expand_query).",
    version: "0.1.0",
    kind: "context-engine",
    categories: ["context"],
    activation: { onStartup: true },
    contracts: { tools: [...DECLARED_TOOLS] },
    configSchema: {
      type: "object",
      additionalProperties: false,
      properties: Object.fromEntries(SETTINGS.map((setting) => [setting.key, schemaOf(setting)])),
    },
    uiHints: Object.fromEntries(SETTINGS.map((setting) => [setting.key, { label: setting.label, help: setting.help }])),
  };
}

export function manifestText(): string {
  return `${JSON.stringify(buildManifest(), null, 2)}\n`;
}
