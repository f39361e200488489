/**
 * A large history arriving at once on PostgreSQL (spec 028, "A backlog in the background"): the turn's maintain hands
 * a backlog of 10,000+ messages to the background indexing instead of indexing 5,000 of them in the turn, and once it
 * has run, lcm_grep with its default parameters finds the oldest detail.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { openPostgresBackend, type PostgresBackend } from "../../src/postgres/open-postgres-backend.js";
import { BACKLOG_IN_BACKGROUND_MESSAGES, type PgSearchIndex } from "../../src/postgres/pg-search-index.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import { createLcmGrepTool } from "../../src/tools/lcm-grep-tool.js";
import { createTestPostgresDatabase } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, userMessage } from "../helpers/messages.js";

const SESSION = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main" };

describe("a large backlog on PostgreSQL", () => {
  let backend: PostgresBackend | null = null;
  afterEach(async () => {
    await backend?.close();
    backend = null;
  });

  it("is indexed in the background from the turn's maintain, and its oldest detail is found after", async () => {
    backend = openPostgresBackend(await createTestPostgresDatabase(), "private");
    const kit = createTestEngine({ backend });
    // One long history committed at once (a bootstrap, an import): past the threshold, the oldest holding the detail.
    const history: AgentMessage[] = [userMessage("the vault key for the staging cluster is quokka-7741")];
    for (let index = 1; index <= BACKLOG_IN_BACKGROUND_MESSAGES; index++) {
      history.push(index % 2 === 0 ? userMessage(`question ${index} about the build`) : assistantMessage(`answer ${index}: the build is green`));
    }
    await kit.newEngine().commitTurn({ ...SESSION, advancementKey: "history", messages: history });
    const index = backend.searchIndex as PgSearchIndex;
    expect(await index.pendingMessages()).toBe(history.length);

    const engine = kit.newEngine({ searchIndex: backend.searchIndex });
    await engine.maintain({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey });
    // Handed over: a background run indexes it (the turn's own maintenance would have indexed 5,000 and left the rest).
    const run = index.backgroundRun();
    expect(run).toBeDefined();
    await run;
    expect(await index.pendingMessages()).toBe(0);

    const { config, tokens, clock, logger } = kit;
    const services = () => createRecallServices({ store: backend!.store, retrievalStore: backend!.retrieval, grants: backend!.grants, config, tokens, clock, logger });
    const grep = createLcmGrepTool({ services, config, logger, clock }, SESSION);
    const result = await grep.execute("call-1", { pattern: "quokka-7741" }) as { details: { matches: { seq?: number }[] } };
    expect(result.details.matches.map((match) => match.seq)).toEqual([1]);
    expect(logger.lines.filter((line) => line.level === "warn" || line.level === "error")).toEqual([]);
    await engine.dispose();
  }, 120_000);
});
