/**
 * The package installs like a real plugin (issue 25): it is not private, its `files` ship the built entry, the bin,
 * the manifest and the docs (not sources, tests or source maps), it has no runtime dependencies (the build bundles
 * what the built code imports into dist/vendor, scripts/vendor-deps.ts: OpenClaw copies a plugin's whole dependency
 * tree each time it loads it), and it asks for the Node the bin checks for. The packed tarball itself is checked, and
 * installed into OpenClaw, by test/host/plugin-install.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MINIMUM_NODE_VERSION } from "../src/cli/node-support.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  private?: boolean; main: string; bin: Record<string, string>; files: string[]; engines: { node: string };
  dependencies?: Record<string, string>; devDependencies: Record<string, string>; openclaw: { extensions: string[] };
};

/** Whether npm's `files` would ship `path` (the patterns used here: a folder, a file, or `dir/**\/*.ext`). */
function shipped(path: string): boolean {
  const normal = path.replace(/^\.\//, "");
  return manifest.files.some((pattern) => {
    if (pattern.endsWith("/")) return normal.startsWith(pattern);
    const glob = /^(.*)\/\*\*\/\*(\.[\w.]+)$/.exec(pattern);
    if (glob) return normal.startsWith(`${glob[1]}/`) && normal.endsWith(glob[2]!);
    return normal === pattern;
  });
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(folder, entry.name)) : entry.name.endsWith(".ts") ? [join(folder, entry.name)] : []);
}

describe("package.json", () => {
  it("is publishable: not private", () => {
    expect(manifest.private).toBeUndefined();
  });

  it("ships the entry OpenClaw loads, the lcm bin, the manifest and the docs, and no sources or maps", () => {
    for (const path of [manifest.main, ...manifest.openclaw.extensions, manifest.bin.lcm!, "dist/src/plugin.js", "dist/src/cli/lcm-program.js", "dist/inspector-web/index.html", "dist/vendor/commander.js", "openclaw.plugin.json", "README.md", "docs/operations.md"]) {
      expect(shipped(path), path).toBe(true);
    }
    for (const path of ["src/plugin.ts", "test/package.test.ts", "bench/run.ts", "scripts/demo.ts", "dist/src/plugin.js.map", "dist/test/package.test.js"]) {
      expect(shipped(path), path).toBe(false);
    }
  });

  it("has no runtime dependencies: every package the plugin and the bin import is bundled at build time", () => {
    const imported = new Set<string>();
    for (const file of sourceFiles(join(ROOT, "src"))) {
      for (const match of readFileSync(file, "utf8").matchAll(/^import (?!type )[^;]*? from "([^".][^"]*)";/gm)) {
        const specifier = match[1]!;
        if (specifier.startsWith("node:")) continue;
        imported.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!);
      }
    }
    expect([...imported].sort()).toEqual(["@modelcontextprotocol/sdk", "@sinclair/typebox", "cli-progress", "commander", "json5"]);
    expect(manifest.dependencies).toBeUndefined();
    for (const name of imported) expect(manifest.devDependencies[name], `${name} is imported by src/ but not installed for the build`).toBeDefined();
    expect(manifest.devDependencies.esbuild).toBeDefined();
    expect(JSON.stringify((manifest as unknown as { scripts: Record<string, string> }).scripts.build)).toContain("scripts/vendor-deps.ts");
  });

  it("asks for the Node the bin checks for", () => {
    expect(manifest.engines.node).toBe(`>=${MINIMUM_NODE_VERSION}`);
  });
});
