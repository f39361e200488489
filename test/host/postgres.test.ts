/**
 * Two real OpenClaw gateways on one PostgreSQL database (issue 28): each gateway has its own home and its own
 * sessions of the same agent, `databaseUrl` in the plugin's config, and compaction tuned to run every few turns.
 * Turns run on both gateways at once. Every turn is stored exactly once (the host's transcript and the database
 * agree), seqs are dense, summaries were written, the integrity check is clean, and the agent on one gateway recalls
 * with lcm_grep a detail the other gateway stored. The server is started on 127.0.0.1 by the test and stopped by PID.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresBackend, type PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { PgDatabase } from "../../src/postgres/pg-database.js";
import { countedIntegrityChecker } from "../../src/services/integrity-service.js";
import { systemClock } from "../../src/contracts.js";
import { startPostgres, type PostgresServer } from "../postgres/postgres-server.js";
import { callToolMarker, toolResultsOf } from "./fake-model-script.js";
import { fillerText, HostConversation } from "./harness/host-conversation.js";
import { HostSuite } from "./harness/host-suite.js";

const TURNS = 6;
const ALPHA_KEY = "ALPHA-KEY-6612-LYNX";
const TUNED = { freshTailCount: 4, leafChunkTokens: 256, leafMinFanout: 2, leafTargetTokens: 64, condensedTargetTokens: 96 };

describe("two gateways on one PostgreSQL database", () => {
  let server: PostgresServer;
  let url: string;
  let alpha: HostSuite;
  let beta: HostSuite;
  let backend: PostgresBackend;
  const sessions: { alpha?: HostConversation; beta?: HostConversation } = {};

  beforeAll(async () => {
    server = await startPostgres();
    const admin = new PgDatabase(server.url, { poolSize: 1 });
    await admin.run("CREATE DATABASE lcm_gateways");
    await admin.close();
    url = server.url.replace(/\/postgres$/, "/lcm_gateways");
    alpha = await HostSuite.create({ name: "postgres-alpha", pluginConfig: { ...TUNED, databaseUrl: url } });
    beta = await HostSuite.create({ name: "postgres-beta", pluginConfig: { ...TUNED, databaseUrl: url } });
    await Promise.all([alpha.gateway.start(), beta.gateway.start()]);
    sessions.alpha = new HostConversation(alpha, "agent:main:alpha");
    sessions.beta = new HostConversation(beta, "agent:main:beta");
    backend = openPostgresBackend(url, "private");
  });

  afterAll(async () => {
    await backend?.close();
    await alpha?.dispose();
    await beta?.dispose();
    await server?.stop();
  });

  it("stores every turn of both gateways exactly once while they run at the same time, with compaction", async () => {
    const play = async (session: HostConversation, name: string) => {
      for (let turn = 1; turn <= TURNS; turn++) {
        const detail = name === "alpha" && turn === 1 ? ` Remember the release key ${ALPHA_KEY}.` : "";
        await session.say(`${name} turn ${turn}:${detail} ${fillerText(300, `${name}-${turn}`)}`);
      }
    };
    await Promise.all([play(sessions.alpha!, "alpha"), play(sessions.beta!, "beta")]);
    for (const [suite, session] of [[alpha, sessions.alpha!], [beta, sessions.beta!]] as const) {
      const conversation = (await backend.retrieval.findConversationBySessionKey("main", session.sessionKey))!;
      expect(conversation).not.toBeNull();
      const stored = await backend.store.getMessagesBySeq(conversation.conversationId, 1, 1_000_000, 10_000);
      const host = await suite.hostHistory(session.sessionKey);
      expect(stored.map((message) => message.role)).toEqual(host.map((message) => message.role));
      expect(stored.map((message) => message.seq)).toEqual(stored.map((_, index) => index + 1));
      const userTexts = stored.filter((message) => message.role === "user").map((message) => message.content);
      expect(userTexts).toEqual(session.sent);
      expect(suite.pendingCommits()).toBe(0);
      expect(suite.healthProblems()).toEqual([]);
    }
    const summaries = await backend.database.row<{ count: number }>("SELECT count(*)::bigint AS count FROM summaries");
    expect(summaries!.count).toBeGreaterThan(0);
    const integrity = await countedIntegrityChecker(backend.integrity, systemClock).check();
    expect(integrity.findings).toEqual([]);
  });

  it("lets the agent on one gateway recall with lcm_grep what the other gateway stored", async () => {
    const turn = await sessions.beta!.say(`find the release key ${callToolMarker("lcm_grep", { pattern: ALPHA_KEY, allConversations: true })}`);
    const last = turn.requests.filter((request) => request.kind === "agent").at(-1)!;
    expect(toolResultsOf(last.body).join("\n")).toContain(ALPHA_KEY);
  });
});
