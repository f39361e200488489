/**
 * When LCM cannot use its database, through the real entry (register with the fake plugin API), on real files:
 * the engine steps aside for OpenClaw's own (no owned compaction, no durable turns, compaction delegated to the
 * host's function itself), the file is left exactly as it was, `/lcm status` and the tools say where, why and
 * what to do, a read-only LCM file is still read, and the cause is logged once.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closeAllDatabases, openDatabase } from "../../src/sqlite/connection-registry.js";
import type { CompactionDelegate, CompactParams, ContextEngine } from "../../src/host/openclaw-types.js";
import plugin from "../../src/plugin.js";
import type { CompactionDelegateLoad } from "../../src/engine/runtime-compaction.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { createPeerDatabase } from "../fixtures/peer-database.js";
import { assistantMessage, userMessage, withIdempotencyKey } from "../helpers/messages.js";
import { tempDir } from "../helpers/temp-dir.js";

const SESSION = { sessionId: "s1", sessionKey: "agent:main:main" };
const COMPACT_PARAMS: CompactParams = { ...SESSION, force: true, compactionTarget: "threshold", tokenBudget: 32_000 };

/** A stand-in for the SDK's delegateCompactionToRuntime that records its calls. */
function fakeDelegate(): CompactionDelegate & { calls: CompactParams[] } {
  const calls: CompactParams[] = [];
  const delegate = async (params: CompactParams) => {
    calls.push(params);
    return { ok: true, compacted: true, result: { summary: "host summary", tokensBefore: 900, tokensAfter: 300 } };
  };
  return Object.assign(delegate, { calls });
}

/** Registers the plugin with `delegate` as OpenClaw's own compaction and waits until it has "loaded". */
async function registered(config: Record<string, unknown>, load: () => Promise<CompactionDelegateLoad>): Promise<FakePluginApi> {
  const api = new FakePluginApi(config);
  plugin.register(api, { loadCompactionDelegate: load });
  await new Promise((resolve) => setImmediate(resolve));
  return api;
}

/** Every file of a folder with its mode and content hash. */
function folderSnapshot(folder: string): Record<string, string> {
  return Object.fromEntries(readdirSync(folder).sort().map((name) => {
    const info = statSync(join(folder, name));
    const content = info.isFile() ? createHash("sha256").update(readFileSync(join(folder, name))).digest("hex") : "folder";
    return [name, `${(info.mode & 0o777).toString(8)} ${content}`];
  }));
}

/** An LCM database holding one exchange, closed as a stopped gateway leaves it. */
async function lcmDatabaseWithOneTurn(databasePath: string): Promise<void> {
  const api = new FakePluginApi({ databasePath });
  plugin.register(api);
  await api.engine().commitTurn({
    ...SESSION, advancementKey: "t1",
    messages: [withIdempotencyKey(userMessage("where is the kestrel report"), "run1:user"), assistantMessage("in the blue folder")],
  });
  await api.tool("lcm_grep").execute("call", { pattern: "kestrel" }); // indexes the messages, as maintain would
  closeAllDatabases();
}

/** Folders made read-only by a scenario: writable again afterwards, so that the temporary folders can be removed. */
const readOnlyFolders: string[] = [];

interface Scenario {
  name: string;
  /** Creates the file at the returned path; `folder` is then snapshotted. */
  create: (folder: string) => Promise<string>;
  /** What /lcm status and the tool error say was found. */
  found: RegExp;
  /** Whether the file is LCM's and readable, so status and recall read it. */
  readable: boolean;
}

const SCENARIOS: Scenario[] = [
  {
    name: "a lossless-claw database",
    create: async (folder) => {
      const path = join(folder, "lcm.db");
      createPeerDatabase(path);
      return path;
    },
    found: /holds a lossless-claw database \(tables conversations, messages, summaries, message_parts, …\), not an LCM database\. LCM left it untouched.*To bring its history into LCM: openclaw lcm import lossless-claw .*lcm\.db \(a dry run; --apply writes\)\./,
    readable: false,
  },
  {
    name: "a file that is not SQLite",
    create: async (folder) => {
      const path = join(folder, "lcm-context.db");
      writeFileSync(path, "{\"this\": \"is a JSON file someone named .db\"}\n", { mode: 0o644 });
      return path;
    },
    found: /is not a SQLite database \(it starts with .*\)\. LCM left it untouched/,
    readable: false,
  },
  {
    name: "an LCM database from a newer version",
    create: async (folder) => {
      const path = join(folder, "lcm-context.db");
      const database = openDatabase(path);
      database.raw.exec("PRAGMA user_version = 99");
      database.close();
      return path;
    },
    found: /has schema version 99, newer than this plugin supports \(\d+\).*left it untouched.*upgrade the plugin/,
    readable: false,
  },
  {
    name: "a read-only LCM database (mode 0444)",
    create: async (folder) => {
      const path = join(folder, "lcm-context.db");
      await lcmDatabaseWithOneTurn(path);
      chmodSync(path, 0o444);
      return path;
    },
    found: /cannot be written: the file is read-only \(mode 0444\)\. LCM opens it read-only/,
    readable: true,
  },
  {
    name: "an LCM database in a read-only folder",
    create: async (folder) => {
      const inner = join(folder, "ro");
      mkdirSync(inner);
      const path = join(inner, "lcm-context.db");
      await lcmDatabaseWithOneTurn(path);
      chmodSync(inner, 0o555);
      readOnlyFolders.push(inner);
      return path;
    },
    found: /cannot be written: its folder .*ro is read-only \(mode 0555\).*LCM opens it read-only/,
    readable: true,
  },
];

afterEach(() => {
  closeAllDatabases();
  for (const folder of readOnlyFolders.splice(0)) chmodSync(folder, 0o755);
});

describe.each(SCENARIOS)("when the database path holds $name", (scenario) => {
  async function setUp() {
    const folder = tempDir();
    const databasePath = await scenario.create(folder);
    const watched = scenario.name.includes("folder") ? join(folder, "ro") : folder;
    const before = folderSnapshot(watched);
    const delegate = fakeDelegate();
    const api = await registered({ databasePath }, async () => ({ delegate }));
    const untouched = () => expect(folderSnapshot(watched)).toEqual(before);
    return { databasePath, api, delegate, untouched };
  }

  it("serves an engine that claims neither compaction nor durable turns, and has no commitTurn", async () => {
    const { api, untouched } = await setUp();
    const engine = api.engine();
    expect(engine.info).toMatchObject({ id: "lcm", ownsCompaction: false });
    expect(engine.info.transcriptSemantics).toBeUndefined();
    expect("commitTurn" in engine).toBe(false);
    untouched();
  });

  it("hands compaction to OpenClaw's own: the delegate function itself, which the host recognises by identity", async () => {
    const { api, delegate, untouched } = await setUp();
    const engine = api.engine();
    expect(engine.compact).toBe(delegate);
    expect(await engine.compact(COMPACT_PARAMS)).toMatchObject({ ok: true, compacted: true });
    expect(delegate.calls).toEqual([COMPACT_PARAMS]);
    untouched();
  });

  it("passes the host's messages through and reports every other hook truthfully, naming path, setting and fix", async () => {
    const { api, databasePath, untouched } = await setUp();
    const engine: ContextEngine = api.engine();
    const history = [userMessage("keep going"), assistantMessage("going")];
    expect(await engine.assemble({ ...SESSION, messages: history })).toEqual({ messages: history, estimatedTokens: 0 });
    expect(await engine.ingest({ ...SESSION, message: userMessage("hi") })).toEqual({ ingested: false });
    const bootstrap = await engine.bootstrap({ ...SESSION, sessionFile: SESSION.sessionKey });
    expect(bootstrap.bootstrapped).toBe(false);
    expect(bootstrap.reason).toContain(databasePath);
    expect(bootstrap.reason).toMatch(/databasePath \(or the LCM_DATABASE_PATH environment variable\)/);
    expect(bootstrap.reason).toMatch(/Fix: /);
    expect(bootstrap.reason).toMatch(/imports the turns it missed from that transcript/);
    expect((await engine.maintain(SESSION)).changed).toBe(false);
    untouched();
  });

  it("answers /lcm status with what was found, the path, the setting and the fix", async () => {
    const { api, databasePath, untouched } = await setUp();
    const text = (await api.command("lcm").handler({ ...SESSION, agentId: "main", args: "status" })).text;
    expect(text).toContain(databasePath);
    expect(text).toMatch(scenario.found);
    expect(text).toMatch(/plugins\.entries\.lcm\.config\.databasePath \(or the LCM_DATABASE_PATH environment variable\)/);
    expect(text).toMatch(/Fix: /);
    if (scenario.readable) {
      expect(text).toMatch(/^LCM is read-only: nothing new is being stored\./);
      expect(text).toMatch(/Stored: 2 messages/);
      const doctor = (await api.command("lcm").handler({ ...SESSION, agentId: "main", args: "doctor" })).text;
      expect(doctor).toMatch(/^\/lcm doctor needs to write to the database, which LCM has open read-only\..*Fix: /);
    } else {
      expect(text).toMatch(/^\/lcm status: LCM is unavailable\./);
    }
    untouched();
  });

  it(scenario.readable ? "still finds stored history with lcm_grep" : "gives lcm_grep an error result naming the path, the setting and the fix", async () => {
    const { api, databasePath, untouched } = await setUp();
    const result = await api.tool("lcm_grep").execute("call", { pattern: "kestrel" });
    const text = result.content[0]!.text;
    if (scenario.readable) {
      expect(result.isError).toBeUndefined();
      expect(text).toMatch(/"matchCount": 1/);
    } else {
      expect(result.isError).toBe(true);
      expect(text).toContain(databasePath);
      expect(text).toMatch(scenario.found);
      expect(text).toMatch(/LCM_DATABASE_PATH/);
    }
    untouched();
  });

  it("logs the cause once per process, as a warning, however many turns and tool calls follow", async () => {
    const { api, databasePath } = await setUp();
    for (let turn = 0; turn < 3; turn++) {
      const engine = api.engine();
      await engine.bootstrap(SESSION);
      await engine.assemble({ ...SESSION, messages: [] });
      await engine.compact(COMPACT_PARAMS);
      await api.command("lcm").handler({ ...SESSION, args: "status" });
      await api.tool("lcm_grep").execute("call", { pattern: "kestrel" });
    }
    const lines = api.logs.filter((line) => line.message.includes(databasePath));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: "warn", message: expect.stringMatching(/^\[lcm\] LCM cannot use its database\./) });
    expect(api.errors()).toEqual([]);
  });
});

describe("OpenClaw's own compaction when the database cannot be used", () => {
  async function peerApi(load: () => Promise<CompactionDelegateLoad>) {
    const databasePath = join(tempDir(), "lcm.db");
    createPeerDatabase(databasePath);
    return { databasePath, api: await registered({ databasePath }, load) };
  }

  it("answers ok: false naming the path, the setting and the fix when the SDK cannot be loaded", async () => {
    const { api, databasePath } = await peerApi(async () => ({ delegate: null, reason: "openclaw/plugin-sdk/core could not be loaded (not found)" }));
    const result = await api.engine().compact(COMPACT_PARAMS);
    expect(result).toMatchObject({ ok: false, compacted: false });
    expect(result.reason).toContain(databasePath);
    expect(result.reason).toMatch(/LCM_DATABASE_PATH.*Fix: |Fix: .*LCM_DATABASE_PATH/);
    expect(result.reason).toMatch(/OpenClaw's own compaction could not be reached either: openclaw\/plugin-sdk\/core could not be loaded/);
  });

  it("waits for the SDK when it is still loading and then compacts through it", async () => {
    const delegate = fakeDelegate();
    let finish: (load: CompactionDelegateLoad) => void = () => {};
    const { api } = await peerApi(() => new Promise((resolve) => (finish = resolve)));
    const engine = api.engine();
    expect(engine.compact).not.toBe(delegate);
    const compacting = engine.compact(COMPACT_PARAMS);
    finish({ delegate });
    expect(await compacting).toMatchObject({ ok: true, compacted: true });
    expect(delegate.calls).toHaveLength(1);
  });

  it("loads it from openclaw/plugin-sdk/core by default, and says so when OpenClaw is not installed", async () => {
    const databasePath = join(tempDir(), "lcm.db");
    createPeerDatabase(databasePath);
    const api = new FakePluginApi({ databasePath });
    plugin.register(api);
    const result = await api.engine().compact(COMPACT_PARAMS);
    expect(result.ok).toBe(false);
    expect(result.reason).toMatch(/openclaw\/plugin-sdk\/core/);
  });
});

describe("a read-only LCM database", () => {
  it("searches a read-only file without writing: messages waiting for the full-text index are read directly", async () => {
    const databasePath = join(tempDir(), "lcm-context.db");
    const writer = new FakePluginApi({ databasePath });
    plugin.register(writer);
    await writer.engine().commitTurn({ ...SESSION, advancementKey: "t1", messages: [withIdempotencyKey(userMessage("kestrel"), "run1:user")] });
    closeAllDatabases();
    chmodSync(databasePath, 0o444);
    const api = await registered({ databasePath }, async () => ({ delegate: fakeDelegate() }));
    expect((await api.tool("lcm_grep").execute("call", { pattern: "kestrel" })).content[0]!.text).toMatch(/"matchCount": 1/);
    expect((await api.tool("lcm_grep").execute("call", { pattern: "kestrel", mode: "full_text" })).content[0]!.text).toMatch(/"matchCount": 1/);
    expect(api.errors()).toEqual([]);
    expect(statSync(databasePath).mode & 0o777).toBe(0o444);
  });
});

describe("when the database becomes usable again", () => {
  it("serves the real engine on the next turn, and reads a read-only file write-enabled from then on", async () => {
    const folder = tempDir();
    const databasePath = join(folder, "lcm-context.db");
    await lcmDatabaseWithOneTurn(databasePath);
    chmodSync(databasePath, 0o444);
    const api = await registered({ databasePath }, async () => ({ delegate: fakeDelegate() }));
    expect(api.engine().info.ownsCompaction).toBe(false);
    expect((await api.command("lcm").handler({ ...SESSION, args: "status" })).text).toMatch(/^LCM is read-only/);
    chmodSync(databasePath, 0o644);
    const engine = api.engine();
    expect(engine.info).toMatchObject({ ownsCompaction: true, transcriptSemantics: { turnAdvancementIdempotency: "atomic-idempotent-v1" } });
    expect(await engine.commitTurn({ ...SESSION, advancementKey: "t2", messages: [withIdempotencyKey(userMessage("back again"), "run2:user")] }))
      .toEqual({ status: "committed" });
    const status = (await api.command("lcm").handler({ ...SESSION, args: "status" })).text;
    expect(status).toMatch(/^LCM status · conversation/);
    expect(status).toMatch(/Stored: 3 messages/);
  });
});
