/**
 * lcm_grep end to end on every backend (issue 28): turns stored through the engine's commitTurn, the tool built over
 * the backend's stores as the plugin builds it, and called through its execute with default parameters. The same
 * history gives the same matches, in the same order, on SQLite and PostgreSQL.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { GrepMatch } from "../../src/search/grep.js";
import { createRecallServices } from "../../src/retrieval/recall-services.js";
import { createLcmGrepTool } from "../../src/tools/lcm-grep-tool.js";
import type { AgentMessage } from "../../src/host/openclaw-types.js";
import { backendKinds, openTestBackend, type TestBackend } from "../helpers/backends.js";
import { createTestEngine } from "../helpers/engine.js";
import { assistantMessage, toolCallMessage, toolResultMessage, userMessage } from "../helpers/messages.js";
import { runFixtureSql } from "../helpers/sql-fixtures.js";
import { tempDir } from "../helpers/temp-dir.js";

const SESSION = { agentId: "main", sessionKey: "agent:main:main", sessionId: "s-main" };
/** A tool output past the large-file threshold (set low below): stored aside, the message keeps a reference. */
const BUILD_LOG = `${"compiling module ok\n".repeat(300)}ERROR: linker could not find symbol quokkaResolver\n${"cleanup ok\n".repeat(50)}`;

interface GrepDetails {
  matches: GrepMatch[];
  note?: string;
  strategy?: string;
}

describe.each(backendKinds())("lcm_grep on %s", (kind) => {
  let opened: TestBackend;
  let grep: (params: Record<string, unknown>) => Promise<GrepDetails>;

  beforeEach(async () => {
    opened = await openTestBackend(kind);
    const kit = createTestEngine({ backend: opened.backend, config: { filesDirectory: tempDir(), largeFileTokenThreshold: 1_000 } });
    const turns: AgentMessage[][] = [
      [userMessage("remember the deploy key zebra-7731 for later"), assistantMessage("Noted: zebra-7731.")],
      ...Array.from({ length: 12 }, (_, index) => [userMessage(`routine question ${index} about the build`), assistantMessage(`routine answer ${index}`)]),
      [userMessage("where is LcmContextEngineFactory defined?"), assistantMessage("In the engine folder; we deployed it yesterday.")],
      [userMessage("the p95 was 1234ms before the fix"), assistantMessage("数据库迁移完成了，明天上线。")],
      [userMessage("the request failed: timeout after 3000 ms on /api/orders"), toolCallMessage([{ id: "call-1", name: "build", arguments: { target: "all" } }])],
      [toolResultMessage("call-1", "build", BUILD_LOG), assistantMessage("billing billing: the billing deploy note")],
    ];
    let turn = 0;
    for (const messages of turns) {
      const engine = kit.newEngine();
      await engine.commitTurn({ sessionId: SESSION.sessionId, sessionKey: SESSION.sessionKey, advancementKey: `turn-${++turn}`, messages });
      await engine.dispose();
    }
    const conversation = await opened.backend.store.findConversation({ agentId: SESSION.agentId, sessionId: SESSION.sessionId });
    await runFixtureSql(opened, [{
      sql: `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
              descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
            VALUES ('sum_00000000000000aa', ?, 'leaf', 0, 'The team planned the okapi-migration for the quarter.', 20, 200, 1, 2, 0, 2, 1, 2, '[]', 'normal', 3)`,
      params: [conversation!.conversationId],
    }, {
      sql: `INSERT INTO summaries (summary_id, conversation_id, kind, depth, content, token_count, source_token_count, earliest_at, latest_at,
              descendant_count, source_message_count, seq_start, seq_end, file_ids, level, created_at)
            VALUES ('sum_00000000000000bb', ?, 'condensed', 1, 'Condensed: the early setup.', 10, 20, 1, 2, 1, 2, 1, 2, '[]', 'normal', 4)`,
      params: [conversation!.conversationId],
    }, {
      sql: `INSERT INTO summary_parents (summary_id, parent_summary_id, ordinal)
            SELECT c.id, l.id, 0 FROM summaries c, summaries l WHERE c.summary_id = 'sum_00000000000000bb' AND l.summary_id = 'sum_00000000000000aa'`,
    }]);
    const { config, tokens, clock, logger } = kit;
    const services = () => createRecallServices({
      store: opened.backend.store, retrievalStore: opened.backend.retrieval, grants: opened.backend.grants, config, tokens, clock, logger,
    });
    const tool = createLcmGrepTool({ services, config, logger, clock }, SESSION);
    grep = async (params) => {
      const result = await tool.execute("call-1", params);
      const details = (result as { details?: unknown }).details as GrepDetails & { status?: string; error?: string };
      if (!details || !Array.isArray(details.matches)) throw new Error(`lcm_grep failed: ${JSON.stringify(result)}`);
      return details;
    };
  });
  afterEach(async () => {
    await opened.close();
  });

  const seqs = (details: GrepDetails) => details.matches.map((match) => (match.type === "message" ? match.seq : match.type));

  it("finds an early unique identifier with the default parameters", async () => {
    const found = await grep({ pattern: "zebra-7731" });
    expect(seqs(found)).toEqual([2, 1]);
    // Both messages are under the leaf, which the condensed summary now stands for.
    expect(found.matches.map((match) => (match as { coveringSummaryId?: string }).coveringSummaryId)).toEqual(["sum_00000000000000bb", "sum_00000000000000bb"]);
    expect((await grep({ pattern: "routine question 11" })).matches).toEqual([expect.objectContaining({ seq: 25, coveringSummaryId: null })]);
    expect(found.strategy).toBe("index");
  });

  it("finds a camelCase fragment, another form of a word, a number with its unit, Chinese and a regex", async () => {
    expect(seqs(await grep({ pattern: "ContextEngine", mode: "full_text" }))).toEqual([27]);
    expect(seqs(await grep({ pattern: "deployment", mode: "full_text" }))).toEqual(expect.arrayContaining([1, 28, 34]));
    expect(seqs(await grep({ pattern: "1234 ms", mode: "full_text" }))).toEqual([29]);
    expect(seqs(await grep({ pattern: "迁移", mode: "full_text" }))).toEqual([30]);
    expect(seqs(await grep({ pattern: "timeout after \\d+ ms" }))).toEqual([31]);
  });

  it("finds a match inside a stored-aside tool output, and a summary", async () => {
    for (const mode of ["regex", "full_text"]) {
      const found = await grep({ pattern: "quokkaResolver", mode });
      expect(found.matches, mode).toEqual([expect.objectContaining({ type: "message", seq: 33, inFile: expect.objectContaining({ line: 301 }) })]);
    }
    expect((await grep({ pattern: "okapi migration", mode: "full_text" })).matches)
      .toEqual([expect.objectContaining({ type: "summary", summaryId: "sum_00000000000000aa" })]);
  });

  it("orders matches the same way on every backend", async () => {
    expect(seqs(await grep({ pattern: "billing deploy", mode: "full_text", sort: "relevance" }))).toEqual([34, 1, 28]);
    expect(seqs(await grep({ pattern: "routine", limit: 5 }))).toEqual([26, 25, 24, 23, 22]);
  });
});
