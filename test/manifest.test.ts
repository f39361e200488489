import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTINGS } from "../src/config.js";
import { buildManifest, configurationTable, manifestText } from "../src/manifest.js";

describe("openclaw.plugin.json", () => {
  const committed = readFileSync(new URL("../openclaw.plugin.json", import.meta.url), "utf8");

  it("is the manifest generated from the settings table (run `npm run manifest` after changing settings)", () => {
    expect(committed).toBe(manifestText());
  });

  it("declares the context-engine kind and a schema with label and help for every setting", () => {
    const manifest = buildManifest() as {
      kind: string;
      configSchema: { properties: Record<string, unknown> };
      uiHints: Record<string, { label: string; help: string }>;
    };
    expect(manifest.kind).toBe("context-engine");
    for (const setting of SETTINGS) {
      expect(manifest.configSchema.properties[setting.key]).toBeDefined();
      expect(manifest.uiHints[setting.key]?.label).toBeTruthy();
      expect(manifest.uiHints[setting.key]?.help).toBeTruthy();
    }
  });

  it.each(["../README.md", "../docs/configuration.md"])("%s documents every setting (the generated table)", (document) => {
    expect(readFileSync(new URL(document, import.meta.url), "utf8")).toContain(configurationTable());
  });

  it("is pointed at by package.json as a built JavaScript extension", () => {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
      type: string;
      openclaw: { extensions: string[] };
    };
    expect(pkg.type).toBe("module");
    expect(pkg.openclaw.extensions).toEqual(["./dist/index.js"]);
  });
});
