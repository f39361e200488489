/**
 * `lcm grep`, `describe` and `expand` go through the same RecallService and engines as the agent's tools: the same
 * matches for the same search, the same description of a summary, the DAG walk down to the original messages.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { DescribeOutputSchema, ExpandOutputSchema, GrepOutputSchema } from "../../src/cli/output-schemas.js";
import type { ExpandOutput, GrepOutput } from "../../src/cli/commands/recall-commands.js";
import { EXIT } from "../../src/cli/exit-codes.js";
import plugin from "../../index.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { tempDatabasePath } from "../helpers/temp-dir.js";
import { buildDatabase, exchanges, runJson, runLcm } from "./cli-harness.js";

let db: string;
let summaryId: string;
/** Summaries whose text repeats "markerr19 " (the deterministic summaries keep it at two depths). */
let copies: string[];

beforeAll(async () => {
  db = tempDatabasePath();
  const harness = await buildDatabase({ databasePath: db, compact: true, sessions: [{ sessionKey: "agent:main:main", sessionId: "s1", messages: exchanges(60, 40, "r") }] });
  summaryId = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'leaf' ORDER BY id LIMIT 1")!.summary_id;
  copies = harness.db.all<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE instr(content, 'markerr19 ') > 0 ORDER BY depth").map((row) => row.summary_id);
});

describe("lcm grep", () => {
  it("finds a compacted detail with the same matches as lcm_grep", async () => {
    const data = await runJson<GrepOutput>(["grep", "markerr3\\b", "--db", db], GrepOutputSchema);
    expect(data.matchCount).toBeGreaterThan(0);
    const api = new FakePluginApi({ databasePath: db });
    plugin.register(api);
    const tool = await api.tool("lcm_grep", { agentId: "main", sessionKey: "agent:main:main", sessionId: "s1" }).execute("c1", { pattern: "markerr3\\b" });
    const toolMatches = (tool.details as { matches: unknown[] }).matches;
    expect(data.matches).toEqual(toolMatches);
    expect(data.matches[0]).toMatchObject({ type: "message", coveringSummaryId: expect.stringMatching(/^sum_/) });
  });

  it("lists the message holding a detail first, with the summaries that repeat it named on its line", async () => {
    expect(copies.length).toBeGreaterThanOrEqual(2);
    const data = await runJson<GrepOutput>(["grep", "markerr19\\b", "--db", db], GrepOutputSchema);
    expect(data.matches.map((match) => match.type)).toEqual(["message"]);
    expect(data.matches[0]).toMatchObject({ alsoIn: expect.arrayContaining(copies) });
    const text = (await runLcm(["grep", "markerr19\\b", "--db", db])).stdout.split("\n");
    expect(text[1]).toMatch(/· seq 37 · user · .* · also in sum_\w+, sum_\w+\]/);
    for (const copy of copies) expect(text[1]).toContain(copy);
  });

  it("searches full text and reports the scope it searched", async () => {
    const data = await runJson<GrepOutput>(["grep", "detailr59", "--mode", "full_text", "--db", db], GrepOutputSchema);
    expect(data).toMatchObject({ mode: "full_text", searchedConversations: 1 });
    expect(data.matches.length).toBeGreaterThan(0);
    const text = (await runLcm(["grep", "detailr59", "--mode", "full_text", "--db", db])).stdout;
    expect(text).toMatch(/^\d+ match(es)? for "detailr59" \(full_text, both\) in 1 conversation/);
  });

  it("exits 2 for an invalid mode or pattern, 3 for an unknown conversation", async () => {
    expect((await runLcm(["grep", "x", "--mode", "fuzzy", "--db", db])).code).toBe(EXIT.usage);
    expect((await runLcm(["grep", "(unclosed", "--db", db])).code).toBe(EXIT.usage);
    expect((await runLcm(["grep", "x", "--conversation", "42", "--db", db])).code).toBe(EXIT.notFound);
  });
});

describe("lcm describe", () => {
  it("describes a summary as lcm_describe does", async () => {
    const data = await runJson<{ type: string; summaryId: string; content: string; sourceMessageIds: number[] }>(["describe", summaryId, "--db", db], DescribeOutputSchema);
    expect(data).toMatchObject({ type: "summary", summaryId, conversationId: 1 });
    expect(data.sourceMessageIds.length).toBeGreaterThan(0);
    expect((await runLcm(["describe", summaryId, "--db", db])).stdout).toContain(data.content);
  });

  it("exits 3 for an id that is not stored and 2 for one that is not an id", async () => {
    expect((await runLcm(["describe", "sum_0000000000000000", "--db", db])).code).toBe(EXIT.notFound);
    expect((await runLcm(["describe", "hello", "--db", db])).code).toBe(EXIT.usage);
  });
});

describe("lcm expand", () => {
  it("walks from a leaf summary down to its original messages", async () => {
    const data = await runJson<ExpandOutput>(["expand", summaryId, "--db", db], ExpandOutputSchema);
    expect(data.kind).toBe("walk");
    if (data.kind !== "walk") return;
    expect(data.items.some((item) => item.type === "message" && /markerr1\b/.test(item.content))).toBe(true);
  });

  it("answers a question under a summary with excerpts when no model is configured", async () => {
    const data = await runJson<ExpandOutput>(["expand", summaryId, "--prompt", "what was asked in r1?", "--db", db], ExpandOutputSchema);
    expect(data).toMatchObject({ kind: "query", mode: "excerpts" });
  });
});
