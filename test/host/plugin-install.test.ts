/**
 * The plugin installs the way users install plugins (issues 6 and 25): `openclaw plugins install -l <dir>` (a linked
 * checkout) and `openclaw plugins install <tarball>` (what `npm pack` produces: no runtime dependencies, the
 * build bundles them into dist/vendor), each into its own HOME; `openclaw plugins inspect lcm --runtime` then reports it
 * loaded, selected as the context engine, with its tools, commands and config schema. The tarball holds the built
 * code, the manifest and the docs only, and the `lcm` bin runs from the installed copy: on a database, and on a Node
 * without node:sqlite with a message instead of a stack trace. Without a terminal, `--force` (a source outside
 * ClawHub) and `--accept-capabilities` stand in for the prompts a user answers.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { closeSharedDatabase } from "../../src/sqlite/connection-registry.js";
import { buildDatabase, exchanges } from "../cli/cli-harness.js";
import { SETTINGS } from "../../src/config.js";
import { hostEnv, OpenClawCli, type PluginInspection } from "./harness/openclaw-cli.js";
import { runNpm } from "./harness/openclaw-install.js";
import { REPO_ROOT, RUNS_DIR } from "./harness/paths.js";
import { declaredPluginTools, PLUGIN_ID, writeHostConfig } from "./harness/host-config.js";
import { engineHealthProblems, readOpenClawLog } from "./harness/openclaw-log.js";

/** A CLI on a fresh HOME whose config only sends OpenClaw's log to the suite folder. */
function freshHome(name: string): { cli: OpenClawCli; home: string; logFile: string } {
  const dir = join(RUNS_DIR, name);
  const home = join(dir, "home");
  const logFile = join(dir, "openclaw.log");
  writeHostConfig(home, { logging: { file: logFile } });
  return { cli: new OpenClawCli({ env: hostEnv(home), workDir: dir }), home, logFile };
}

function expectHealthy(inspection: PluginInspection, logFile: string): void {
  expect(inspection.plugin).toMatchObject({ id: PLUGIN_ID, status: "loaded", enabled: true, activated: true });
  expect(inspection.plugin.contextEngineIds).toEqual([PLUGIN_ID]);
  expect([...inspection.plugin.toolNames].sort()).toEqual([...declaredPluginTools()].sort());
  expect(inspection.plugin.commands).toEqual(["lcm"]);
  expect(inspection.plugin.configSchema).toBe(true);
  expect(Object.keys(inspection.plugin.configJsonSchema?.properties ?? {}).sort())
    .toEqual(SETTINGS.map((setting) => setting.key).sort());
  expect(inspection.diagnostics).toEqual([]);
  expect(engineHealthProblems(readOpenClawLog(logFile))).toEqual([]);
}

function configOf(home: string): { plugins?: { slots?: { contextEngine?: string }; entries?: Record<string, { enabled?: boolean }> } } {
  return JSON.parse(readFileSync(join(home, ".openclaw", "openclaw.json"), "utf8"));
}

describe("installing the plugin the way users do", () => {
  it("installs from a linked checkout and inspects healthy", async () => {
    const { cli, home, logFile } = freshHome("install-linked");
    // The checkout itself: OpenClaw's install scan rejects the staged copy's node_modules link (it points outside).
    await cli.runOk(["plugins", "install", "-l", REPO_ROOT, "--force", "--accept-capabilities"]);
    expect(configOf(home).plugins).toMatchObject({
      slots: { contextEngine: PLUGIN_ID }, entries: { [PLUGIN_ID]: { enabled: true } },
    });
    const inspection = await cli.inspectPlugin(PLUGIN_ID);
    expectHealthy(inspection, logFile);
    expect(inspection.plugin.rootDir).toBe(REPO_ROOT);
  });

  describe("from a packed tarball", () => {
    let tarball: string;
    beforeAll(() => {
      const packDir = join(RUNS_DIR, "install-tarball", "pack");
      mkdirSync(packDir, { recursive: true });
      // The global setup already built dist/; --ignore-scripts skips `prepare` building it again.
      runNpm(["pack", "--ignore-scripts", "--pack-destination", packDir, "--silent"], REPO_ROOT, 120_000);
      const [file] = readdirSync(packDir).filter((name) => name.endsWith(".tgz"));
      if (!file) throw new Error(`npm pack left no tarball in ${packDir}`);
      tarball = join(packDir, file);
    });

    it("holds the built code, the inspector's bundled page, the manifest and the docs only", () => {
      const listing = spawnSync("tar", ["-tzf", tarball], { encoding: "utf8" });
      expect(listing.status).toBe(0);
      const files = listing.stdout.trim().split("\n").map((line) => line.replace(/^package\//, ""));
      const outside = files.filter((file) =>
        !/^dist\/index\.(js|d\.ts)$/.test(file) && !/^dist\/src\/.+\.(js|d\.ts)$/.test(file) && !/^docs\/[\w-]+\.md$/.test(file) &&
        !/^docs\/images\/[\w-]+\.png$/.test(file) && !/^dist\/inspector-web\/[\w.-]+$/.test(file) && !/^dist\/vendor\/[\w.-]+$/.test(file) &&
        !["package.json", "openclaw.plugin.json", "README.md"].includes(file));
      expect(outside).toEqual([]);
      expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/src/plugin.js", "dist/src/cli/bin.js", "openclaw.plugin.json", "docs/operations.md",
        "dist/inspector-web/index.html", "dist/inspector-web/app.js"]));
      const packed = JSON.parse(spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }).stdout);
      expect(packed).not.toHaveProperty("private");
      expect(packed).not.toHaveProperty("dependencies"); // OpenClaw copies a plugin's dependency tree at every load
      // The built code imports Node's modules, its own files and dist/vendor only (the Anthropic SDK when the user installed it).
      const code = spawnSync("tar", ["-xzOf", tarball, ...files.filter((file) => /^dist\/(index|src\/.+)\.js$/.test(file)).map((file) => `package/${file}`)],
        { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).stdout;
      const bare = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*)["']((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/[\w.-]+)*|node:[\w/]+)["']/g)]
        .map((match) => match[1]!)
        .filter((specifier) => !specifier.startsWith("node:") && specifier !== "@anthropic-ai/sdk");
      expect([...new Set(bare)]).toEqual([]);
    });

    it("installs from the tarball, inspects healthy, and its lcm bin runs with nothing installed beside it", async () => {
      const { cli, home, logFile } = freshHome("install-tarball");
      await cli.runOk(["plugins", "install", tarball, "--force", "--accept-capabilities"], { timeoutMs: 240_000 });
      expect(configOf(home).plugins).toMatchObject({ slots: { contextEngine: PLUGIN_ID } });
      const inspection = await cli.inspectPlugin(PLUGIN_ID);
      expectHealthy(inspection, logFile);
      const installed = join(home, ".openclaw", "extensions", PLUGIN_ID);
      expect(inspection.plugin.rootDir).toBe(installed);

      // The bin as package.json names it, from the installed copy (no node_modules: nothing to install).
      const modules = join(installed, "node_modules");
      expect(existsSync(modules) ? readdirSync(modules).filter((name) => !name.startsWith(".")) : []).toEqual([]);
      const { version, bin } = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { version: string; bin: { lcm: string } };
      const lcm = (args: string[], nodeFlags: string[] = []) =>
        spawnSync(process.execPath, [...nodeFlags, join(installed, bin.lcm), ...args], { encoding: "utf8", env: { ...process.env, HOME: home }, timeout: 60_000 });
      expect(lcm(["--version"]).stdout).toBe(`${version}\n`);
      const db = join(RUNS_DIR, "install-tarball", "bin.db");
      await buildDatabase({ databasePath: db, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(3) }] });
      closeSharedDatabase(db);
      const status = lcm(["status", "--db", db]);
      expect(status.status, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/^LCM status · database\nDatabase: 1 conversation · 6 messages/);
      const oldNode = lcm(["status", "--db", db], ["--no-experimental-sqlite"]);
      expect(oldNode.status).toBe(6);
      expect(oldNode.stderr).toMatch(/^lcm: cannot run on Node [\d.]+: it has no node:sqlite module \(LCM needs Node 22\.16 or newer\)\. Run it on a newer Node/);
      expect(oldNode.stderr).not.toMatch(/\n\s+at /);
    });
  });
});
