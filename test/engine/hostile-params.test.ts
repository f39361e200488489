/**
 * No hook throws, whatever its params (issue 13). A hook that rejects makes OpenClaw quarantine the engine for the
 * whole process, so every hook of the real plugin (and of the engine it serves when the database cannot be
 * opened) is called with null, undefined, {}, and a Proxy on which every operation throws something that itself
 * cannot be read; each must resolve with its documented fallback and log a line naming the hook. The same holds
 * for a session model that rejects with such a value, for the recall tools' execute, and for the /lcm command;
 * and a token budget no model has is stored bounded instead of as a number the store could not read back.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { AgentMessage, CommandContext, ContextEngine, HostLlm } from "../../src/host/openclaw-types.js";
import plugin from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { conversation } from "../helpers/messages.js";
import { createRecallEnv, detailsOf, MAIN, textOf } from "../helpers/recall.js";
import { insertLeafSummary } from "../helpers/summaries.js";
import { tempDir } from "../helpers/temp-dir.js";

/**
 * A value on which every operation throws (reading any property, `instanceof`, `Object.keys`, conversion to a
 * string), and what it throws is another such value: an error whose name and message cannot be read.
 */
function unreadable(): object {
  const trap = (): never => {
    throw unreadable();
  };
  return new Proxy(new Error("unreadable"), {
    get: trap, has: trap, ownKeys: trap, getOwnPropertyDescriptor: trap, getPrototypeOf: trap,
    set: trap, defineProperty: trap, deleteProperty: trap,
  });
}

const INPUTS: [string, () => unknown][] = [
  ["null", () => null],
  ["undefined", () => undefined],
  ["{}", () => ({})],
  ["an unreadable Proxy", unreadable],
];

type Hook = "bootstrap" | "maintain" | "ingest" | "ingestBatch" | "afterTurn" | "commitTurn" | "assemble" | "compact" | "onSubagentEnded" | "dispose";

/** Each hook's documented fallback when it cannot do its work. */
const FALLBACKS: Record<Hook, unknown> = {
  bootstrap: { bootstrapped: false, reason: expect.stringMatching(/^bootstrap failed: /) },
  maintain: { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: expect.stringMatching(/^maintain failed: /) },
  ingest: { ingested: false },
  ingestBatch: { ingestedCount: 0 },
  afterTurn: undefined,
  commitTurn: { status: "committed" },
  assemble: { messages: [], estimatedTokens: 0 },
  compact: { ok: false, compacted: false, reason: expect.stringMatching(/^compact failed: /) },
  onSubagentEnded: undefined,
  dispose: undefined,
};
const HOOKS = Object.keys(FALLBACKS) as Hook[];

/**
 * What a call resolved with; a rejection fails the test with a readable message (the rejected value may be one
 * that cannot even be printed).
 */
async function settled<T>(call: () => Promise<T>): Promise<T> {
  let rejected = false;
  const result = await call().catch(() => {
    rejected = true;
  });
  expect(rejected, "the call rejected").toBe(false);
  return result as T;
}

function callHook(engine: ContextEngine, hook: Hook, params: unknown): Promise<unknown> {
  return settled(() => (engine[hook] as (params: unknown) => Promise<unknown>).call(engine, params));
}

/** Whether a failure is expected to be logged: dispose reads nothing, and onSubagentEnded({}) has nothing to revoke. */
function logsFailure(hook: Hook, input: string): boolean {
  return hook !== "dispose" && !(hook === "onSubagentEnded" && input === "{}");
}

describe("every hook of the plugin's engine", () => {
  const env = createRecallEnv();

  describe.each(INPUTS)("called with %s", (input, make) => {
    it.each(HOOKS)("%s resolves with its fallback and logs a line naming the hook", async (hook) => {
      const logged = env.api.logs.length;
      const result = await callHook(env.api.engine(), hook, make());
      expect(result).toEqual(FALLBACKS[hook]);
      const lines = env.api.logs.slice(logged).map((line) => line.message);
      if (logsFailure(hook, input)) expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^\\[lcm\\] ${hook} failed: `)));
      else expect(lines).toEqual([]);
    });
  });

  it("says what is wrong in words: no sessionId, or an error that cannot be read", async () => {
    await settled(() => env.api.engine().ingest({} as never));
    await settled(() => env.api.engine().ingest(unreadable() as never));
    const lines = env.api.errors().slice(-2);
    expect(lines[0]).toMatch(/^\[lcm\] ingest failed: LcmError: The host did not pass a sessionId/);
    expect(lines[1]).toBe("[lcm] ingest failed: an error that could not be described (reading its name or message threw)");
  });

  it("still serves the session afterwards", async () => {
    await env.commit(MAIN, conversation(2, "after"));
    const assembled = await env.api.engine().assemble({ sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, messages: [] });
    expect(assembled.messages).toHaveLength(4);
  });
});

describe("a session model that rejects with an unreadable error", () => {
  const rejecting: HostLlm = { complete: () => Promise.reject(unreadable()) };

  async function storedSession() {
    const env = createRecallEnv({ config: { freshTailCount: 2, leafMinFanout: 2 } });
    // 24 messages of ~100 tokens: far over the threshold of a 1,000-token window.
    await env.commit(MAIN, conversation(12, `${"filler words ".repeat(40)}long`));
    return env;
  }

  it("compact resolves truthfully: the summarizer failure escalates to a fallback summary", async () => {
    const env = await storedSession();
    const result = await settled(() => env.api.engine().compact({
      sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, force: true, compactionTarget: "threshold", runtimeContext: { llm: rejecting },
    }));
    expect(result).toMatchObject({ ok: true, reason: expect.any(String) });
    expect(typeof result.compacted).toBe("boolean");
    expect(env.api.logs.map((line) => line.message)).toContainEqual(expect.stringMatching(/^\[lcm\] compaction \(compact:threshold\)/));
    expect(env.api.logs.map((line) => line.message).join("\n")).toContain("an error that could not be described");
  });

  it("maintain resolves truthfully when a small window forces compaction", async () => {
    const env = await storedSession();
    const result = await settled(() => env.api.engine().maintain({
      sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey, runtimeContext: { llm: rejecting, tokenBudget: 1_000 },
    }));
    expect(result).toMatchObject({ bytesFreed: 0, rewrittenEntries: 0, reason: expect.any(String) });
    expect(result.changed).toBe(true);
    expect(env.api.errors()).toEqual([]);
    expect(env.api.logs.map((line) => line.message)).toContainEqual(expect.stringMatching(/^\[lcm\] compaction \(maintain:threshold\)/));
  });
});

describe("the engine served when the database cannot be opened", () => {
  const blocker = join(tempDir(), "not-a-directory");
  writeFileSync(blocker, "a file where the database folder should be");
  const api = new FakePluginApi({ databasePath: join(blocker, "lcm.db") });
  plugin.register(api);

  /** What it answers: it stores nothing and says why, and it has no commitTurn (unavailable-engine.ts explains). */
  const UNAVAILABLE: Partial<Record<Hook, unknown>> = {
    bootstrap: { bootstrapped: false, reason: expect.stringMatching(/^LCM is unavailable\. .*not-a-directory/) },
    maintain: { changed: false, bytesFreed: 0, rewrittenEntries: 0, reason: expect.stringMatching(/^LCM is unavailable\. /) },
    ingest: { ingested: false },
    ingestBatch: { ingestedCount: 0 },
    afterTurn: undefined,
    assemble: { messages: [], estimatedTokens: 0 },
    compact: { ok: false, compacted: false, reason: expect.stringMatching(/^LCM is unavailable\. /) },
    onSubagentEnded: undefined,
    dispose: undefined,
  };

  it.each(INPUTS)("answers every hook it has, called with %s, without throwing", async (_input, make) => {
    const engine = api.engine();
    const present = HOOKS.filter((name) => typeof engine[name] === "function");
    expect(present).toEqual(Object.keys(UNAVAILABLE));
    for (const hook of present) expect(await callHook(engine, hook, make()), hook).toEqual(UNAVAILABLE[hook]);
  });
});

describe("the recall tools and /lcm with unreadable input", () => {
  const env = createRecallEnv({ llm: { complete: () => Promise.reject(unreadable()) } });

  it.each(["lcm_grep", "lcm_describe", "lcm_expand_query"])("%s answers unreadable arguments with an invalid_input result", async (tool) => {
    await env.commit(MAIN, conversation(2, "tools"));
    const result = await settled(() => env.call(tool, unreadable()));
    expect(result.isError).toBe(true);
    expect(detailsOf(result)).toMatchObject({ status: "error", code: "invalid_input" });
    expect(textOf(result)).toMatch(/The arguments could not be read \(an error that could not be described .*\); pass an object with the parameters/);
  });

  it("lcm_grep answers an unreadable signal and an unreadable parameter value with a result", async () => {
    const grep = env.api.tool("lcm_grep", env.contextOf(MAIN));
    const result = await settled(() => grep.execute("call-1", { pattern: unreadable() }, unreadable() as AbortSignal));
    expect(result).toMatchObject({ isError: true, details: { code: "invalid_input", parameter: "pattern" } });
  });

  it("lcm_expand_query answers when the model rejects with an unreadable error", async () => {
    await env.commit(MAIN, conversation(2, "expand"));
    const summaryId = insertLeafSummary(env.db, env.conversationId(MAIN), 1, 2, "The user asked about expand1.");
    const result = await settled(() => env.call("lcm_expand_query", { prompt: "What was said about expand1?", summaryIds: [summaryId] }));
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("an error that could not be described");
  });

  it.each(INPUTS.filter(([input]) => input !== "{}"))("/lcm answers a command context that is %s", async (_input, make) => {
    const reply = await settled(async () => env.api.command("lcm").handler(make() as CommandContext));
    expect(reply.text).toMatch(/^\/lcm failed: /);
    expect(env.api.errors().at(-1)).toMatch(/^\[lcm\] \/lcm failed: /);
  });
});

describe("messages arrays that cannot be read", () => {
  it("assemble passes nothing through when the host's messages cannot be read", async () => {
    const env = createRecallEnv();
    const params = { sessionId: "hostile-messages", get messages(): AgentMessage[] { throw unreadable(); } };
    expect(await settled(() => env.api.engine().assemble(params))).toEqual({ messages: [], estimatedTokens: 0 });
    expect(env.api.errors().at(-1)).toMatch(/^\[lcm\] assemble failed: an error that could not be described/);
  });
});

describe("token budgets no model has", () => {
  it("are stored bounded, so the session keeps working (an integer above 2^53 could never be read back)", async () => {
    const env = createRecallEnv();
    const session = { sessionId: MAIN.sessionId, sessionKey: MAIN.sessionKey };
    await settled(() => env.api.engine().commitTurn({ ...session, advancementKey: "huge", messages: conversation(1, "huge"), runtimeContext: { tokenBudget: 1e18 } }));
    await settled(() => env.api.engine().assemble({ ...session, messages: [], tokenBudget: 9.2e18 }));
    const assembled = await settled(() => env.api.engine().assemble({ ...session, messages: [] }));
    expect(assembled.messages).toHaveLength(2);
    expect(env.api.errors()).toEqual([]);
  });
});
