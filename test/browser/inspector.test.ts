/// <reference lib="dom" />
/**
 * The inspector in a real headless Chromium, against a database the engine made (a conversation compacted while the
 * model failed: fallback leaves and condensed summaries), served the way `lcm inspect --write` serves it: the DAG's
 * node count, a node opened by a click, a search whose hit opens its node, a repair previewed side by side, applied
 * and undone, and a screenshot whose pixels show the node shapes in their colours.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/contracts.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import { inspectorApiOn } from "../../src/inspector/inspector-wiring.js";
import { type RunningInspector, startInspectorServer } from "../../src/inspector/inspector-server.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { RecordingLogger } from "../helpers/engine.js";
import { fallbackDatabase, recordingModel } from "../repair/repair-fixture.js";
import { launchChromium, nodePoint, pixelCounts } from "./browser.js";

const FALLBACK = "#e8590c";
const MODEL = "#2f6fdf";

let browser: Browser;
let server: RunningInspector;
let page: Page;
let harness: Awaited<ReturnType<typeof fallbackDatabase>>;

beforeAll(async () => {
  harness = await fallbackDatabase();
  const api = inspectorApiOn({
    backend: openSqliteBackend(harness.databasePath, "private"), config: harness.config, tokens: new DefaultTokenEstimator(), clock: systemClock, logger: new RecordingLogger(),
    readOnlyReason: null, model: recordingModel(),
  });
  server = await startInspectorServer({ api });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  await page.goto(server.url);
  await page.waitForSelector("body[data-ready='true']");
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Clicks a node of the graph where Cytoscape drew it. */
async function clickNode(summaryId: string): Promise<void> {
  // Zoomed in as a user would before clicking (at the fitted zoom, nodes of one depth close in time overlap, and the
  // click selects the one drawn on top). A click selects and centres its node with a 200 ms animation: finish any
  // animation first, and click again if the click still missed.
  for (let attempt = 1; ; attempt++) {
    const point = await nodePoint(page, summaryId);
    await page.mouse.click(point.x, point.y);
    try {
      await page.waitForFunction((id) => document.querySelector("#node-panel h3")?.textContent === id, summaryId, { timeout: 10_000 });
      return;
    } catch (error) {
      if (attempt === 3) throw error;
    }
  }
}

describe("the inspector in Chromium", () => {
  it("draws every summary of the conversation as a node, with its message ranges", async () => {
    const summaries = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n;
    const leaves = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE kind = 'leaf'")!.n;
    expect(await page.getAttribute("#dag", "data-node-count")).toBe(String(summaries));
    const drawn = await page.evaluate(() => {
      const cy = (window as any).lcmInspector.cy;
      return { summaries: cy.nodes(".leaf, .condensed").length, ranges: cy.nodes(".range").length, edges: cy.edges().length };
    });
    const links = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summary_parents")!.n;
    expect(drawn).toEqual({ summaries, ranges: leaves, edges: links + leaves });
    expect(await page.textContent("#conversations")).toMatch(/\d+ fallback/);
  });

  it("opens a node by a click: its text, lineage and source messages", async () => {
    const condensed = harness.db.get<{ summary_id: string; content: string }>("SELECT summary_id, content FROM summaries WHERE kind = 'condensed' LIMIT 1")!;
    await clickNode(condensed.summary_id);
    expect(await page.textContent("#node-content")).toBe(condensed.content);
    expect(await page.textContent("#node-panel")).toContain("parents (what it condensed)");
    const leaf = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'leaf' LIMIT 1")!.summary_id;
    await clickNode(leaf);
    expect(await page.textContent("#node-panel")).toMatch(/source messages \(\d+ of \d+\)/);
  });

  it("searches with the lcm_grep engine and opens a hit's summary in the DAG", async () => {
    await page.click("button[data-tab='search']");
    await page.fill("#search-input", "markert7");
    await page.click("#search-run");
    await page.waitForSelector("#search-count");
    expect(await page.textContent("#search-count")).toMatch(/^[1-9]\d* matches/);
    // The summaries whose source range holds the message: the hit names the one that covers it now.
    const seq = harness.db.get<{ seq: number }>("SELECT seq FROM messages WHERE content LIKE 't7 question%'")!.seq;
    const holders = harness.db.all<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE seq_start <= ? AND seq_end >= ?", seq, seq)
      .map((row) => row.summary_id);
    const link = page.locator("#search-results button.link", { hasText: "in the DAG" }).first();
    const covering = /open (sum_[0-9a-f]{16}) in the DAG/.exec((await link.textContent())!)![1]!;
    expect(holders).toContain(covering);
    await link.click();
    await page.waitForFunction((id) => document.querySelector("#node-panel h3")?.textContent === id, covering);
    expect(await page.evaluate(() => (window as any).lcmInspector.cy.$(":selected").id())).toBe(covering);
  });

  it("re-summarizes a fallback summary: old and new side by side, applied, recoloured, then undone", async () => {
    const target = harness.db.get<{ summary_id: string; content: string }>(
      "SELECT s.summary_id, s.content FROM summaries s JOIN context_items c ON c.summary_id = s.id WHERE s.level = 'fallback' ORDER BY c.ordinal LIMIT 1")!;
    await clickNode(target.summary_id);
    const before = await pixelCounts(page, await page.locator("#dag").screenshot(), { fallback: FALLBACK, model: MODEL });
    await page.click("text=Re-summarize with the model");
    await page.waitForSelector("#repair-preview");
    const columns = await page.locator("#repair-preview .text").allTextContents();
    expect(columns[0]).toBe(target.content);
    expect(columns[1]).toMatch(/^Model summary \d+: quarzite/);
    await page.click("#repair-area >> text=Apply");
    await page.waitForSelector("#repair-done");
    expect(harness.db.get("SELECT level, written_by FROM summaries WHERE summary_id = ?", target.summary_id)).toEqual({ level: "normal", written_by: "model:host-llm" });
    const after = await pixelCounts(page, await page.locator("#dag").screenshot(), { fallback: FALLBACK, model: MODEL });
    expect(after.near.model!).toBeGreaterThan(before.near.model! + 20);
    await page.click("#repair-area >> text=Undo");
    await page.waitForSelector("#repair-undone");
    expect(harness.db.get("SELECT level, content FROM summaries WHERE summary_id = ?", target.summary_id)).toEqual({ level: "fallback", content: target.content });
  });

  it("shows the context against the budget, and a screenshot of the DAG with its node shapes in colour", async () => {
    await page.click("button[data-tab='context']");
    await page.waitForSelector("#context-items");
    const rows = await page.locator("#context-items tr").count();
    const items = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM context_items")!.n;
    expect(rows - 1).toBeLessThanOrEqual(items);
    expect(rows - 1).toBeGreaterThan(0);
    await page.click("button[data-tab='dag']");
    await page.click("#fit");
    await page.waitForTimeout(300);
    const png = await page.screenshot();
    const counts = await pixelCounts(page, png, { fallback: FALLBACK, model: MODEL });
    expect(counts.inked / counts.total).toBeGreaterThan(0.02);
    expect(counts.near.fallback!).toBeGreaterThan(200);
    const directory = process.env.LCM_SCREENSHOT_DIR ?? join(harness.databasePath, "..");
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, "inspector-dag.png"), png);
  });
});

/** A DAG of `count` summaries as the API describes one: leaves of 40 messages, condensed by fives, depth by depth. */
function syntheticDag(count: number) {
  const nodes: Record<string, unknown>[] = [];
  let level: { summaryId: string; seqStart: number; seqEnd: number }[] = [];
  const leaves = Math.round(count * 0.8);
  for (let index = 0; index < leaves; index++) {
    const node = { summaryId: `sum_${index.toString(16).padStart(16, "0")}`, seqStart: index * 40 + 1, seqEnd: index * 40 + 40 };
    level.push(node);
    nodes.push({ ...node, kind: "leaf", depth: 0, level: index % 50 === 0 ? "fallback" : "normal", writtenBy: "model:host-llm",
      tokenCount: 200 + (index % 300), parentSummaryIds: [], inContext: false, sourceMessageCount: 40 });
  }
  for (let depth = 1; nodes.length < count && level.length > 1; depth++) {
    const next: typeof level = [];
    for (let start = 0; start < level.length && nodes.length < count; start += 5) {
      const group = level.slice(start, start + 5);
      const node = { summaryId: `sum_${(0x10000000 + nodes.length).toString(16).padStart(16, "0")}`, seqStart: group[0]!.seqStart, seqEnd: group.at(-1)!.seqEnd };
      next.push(node);
      nodes.push({ ...node, kind: "condensed", depth, level: "normal", writtenBy: "model:host-llm", tokenCount: 600,
        parentSummaryIds: group.map((member) => member.summaryId), inContext: depth > 2, sourceMessageCount: 0 });
    }
    level = next;
  }
  return { conversationId: 1, agentId: "main", messageCount: leaves * 40, nodes, ranges: [], rangesOmitted: true };
}

describe("the inspector at 10,000 summaries", () => {
  it("draws them, and pans and zooms with the page still answering (figures printed for docs/operations.md)", async () => {
    const dag = syntheticDag(10_000);
    const big = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    try {
      await big.route("**/api/conversations/*/dag", (route) => route.fulfill({ json: dag }));
      const started = Date.now();
      await big.goto(server.url);
      await big.waitForSelector("#dag[data-node-count='10000'] canvas", { timeout: 120_000 });
      await big.waitForFunction(() => (window as any).lcmInspector.cy?.nodes().length >= 10_000);
      const drawMs = Date.now() - started;
      // Frame gaps while a user zooms in and out with the wheel and drags the graph around.
      await big.evaluate(() => {
        const gaps: number[] = [];
        let last = performance.now();
        const tick = (now: number) => { gaps.push(now - last); last = now; (window as any).lcmFrames.handle = requestAnimationFrame(tick); };
        (window as any).lcmFrames = { gaps, handle: requestAnimationFrame(tick) };
      });
      const box = (await big.locator("#dag").boundingBox())!;
      const center = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      await big.mouse.move(center.x, center.y);
      const interactionStarted = Date.now();
      for (let step = 0; step < 20; step++) { await big.mouse.wheel(0, -240); await big.waitForTimeout(30); }
      for (let step = 0; step < 10; step++) {
        await big.mouse.down();
        await big.mouse.move(center.x + 200, center.y + 80, { steps: 8 });
        await big.mouse.up();
        await big.mouse.move(center.x, center.y);
      }
      for (let step = 0; step < 20; step++) { await big.mouse.wheel(0, 240); await big.waitForTimeout(30); }
      const interactionMs = Date.now() - interactionStarted;
      const gaps = await big.evaluate(() => { cancelAnimationFrame((window as any).lcmFrames.handle); return (window as any).lcmFrames.gaps as number[]; });
      const sorted = [...gaps].sort((a, b) => a - b);
      const p95 = sorted[Math.floor(sorted.length * 0.95)]!;
      const zoom = await big.evaluate(() => (window as any).lcmInspector.cy.zoom());
      console.log(`[inspector 10k] drawn in ${drawMs} ms; 40 wheel steps and 10 drags in ${interactionMs} ms: ${gaps.length} frames, ` +
        `frame gap median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms; zoom after ${zoom.toFixed(3)}`);
      // Usable, not a speed target: the page kept drawing frames through the interaction and never froze. Measured on the
      // idle 2-core machine: median 16.7 ms, p95 283 ms, longest 800 ms (re-texturing at a new zoom level).
      expect(gaps.length).toBeGreaterThan(20);
      expect(sorted.at(-1)!).toBeLessThan(3_000);
    } finally {
      await big.close();
    }
  });
});
