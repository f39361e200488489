/**
 * The end-to-end suite in gateway mode (issue 6): one OpenClaw gateway on loopback, the plugin loaded from the
 * repository's build, a scripted fake model. Asserted on the plugin's database against the host's own
 * transcript (`chat.history`), on what the model received, and on OpenClaw's log.
 * Before the gateway starts, one embedded turn (`agent --local`) runs with OpenClaw's built-in engine in the
 * slot, so LCM meets a session that already has history.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEM_PROMPT_ADDITION } from "../../src/engine/lcm-context-engine.js";
import { callToolMarker } from "./fake-model-script.js";
import { systemTextOf } from "./fake-model-server.js";
import { HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

/** The addition's heading: every model request of an LCM turn carries it in the system prompt. */
const ADDITION_HEADING = SYSTEM_PROMPT_ADDITION.split("\n")[0]!.replace(/^#+\s*/, "");
const EARLIER_MESSAGE = "before LCM: the harbour code is KESTREL-41";

describe("LCM in a real OpenClaw gateway", () => {
  let suite: HostSuite;
  /** A session whose first turn ran on OpenClaw's built-in engine. */
  let earlier: HostConversation;
  /** Model requests made before LCM held the slot. */
  let legacyRequestCount: number;

  beforeAll(async () => {
    suite = await HostSuite.create({ name: "gateway", contextEngine: "legacy" });
    earlier = new HostConversation(suite, "agent:main:e2e-before-lcm");
    await earlier.say(EARLIER_MESSAGE, { local: true });
    legacyRequestCount = suite.model.mark();
    suite.reconfigure({ contextEngine: "lcm" });
    await suite.gateway.start();
  });

  afterAll(async () => {
    await suite?.dispose();
  });

  describe("turns run through the engine", () => {
    let chat: HostConversation;
    beforeAll(() => {
      chat = new HostConversation(suite, "agent:main:e2e-turns");
    });

    it("stores every message of every turn exactly once, tool turns included", async () => {
      await chat.say("first turn: the launch window opens at 14:05");
      // session_status is one of the host's own tools in the minimal profile.
      await chat.say(`second turn runs a tool ${callToolMarker("session_status", {})}`);
      await chat.say("third turn: confirm the window");
      expect(suite.database.messages(chat.sessionKey).map((message) => message.role)).toContain("toolResult");
      await chat.expectStoredExactlyOnce();
    });

    it("sends the model the engine's system prompt addition, which the built-in engine does not", () => {
      const legacy = suite.model.requests({ kind: "agent" }).filter((request) => request.index <= legacyRequestCount);
      const lcm = suite.model.requests({ since: legacyRequestCount, kind: "agent" });
      expect(legacy.length).toBeGreaterThan(0);
      expect(legacy.filter((request) => systemTextOf(request).includes(ADDITION_HEADING))).toEqual([]);
      expect(lcm.length).toBeGreaterThanOrEqual(4); // three turns, one with a tool round trip
      expect(lcm.filter((request) => !systemTextOf(request).includes(SYSTEM_PROMPT_ADDITION))).toEqual([]);
    });

    it("imports history written before LCM was selected, through the host's transcript reader", async () => {
      await earlier.say("after LCM: what was the harbour code?");
      await earlier.expectStoredExactlyOnce();
      const [conversation] = suite.database.conversations(earlier.sessionKey);
      expect(conversation?.bootstrapState).toMatchObject({ source: "host" });
    });

    it("still stores every message exactly once after the gateway restarts", async () => {
      await suite.gateway.restart();
      await chat.say("fourth turn, after the restart");
      await chat.say("fifth turn, after the restart");
      await chat.expectStoredExactlyOnce();
      await earlier.say("after the restart: and the ferry?");
      await earlier.expectStoredExactlyOnce();
    });
  });

  it("never degrades, quarantines or fails the engine", () => {
    expect(suite.healthProblems()).toEqual([]);
  });
});
