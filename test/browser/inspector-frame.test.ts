/// <reference lib="dom" />
/**
 * The Control UI tab's page in a real headless Chromium, in a frame sandboxed the way OpenClaw 2026.9.6 renders a
 * plugin tab (`sandbox="allow-scripts"` alone: an opaque origin, from which the page can read nothing by script).
 * The route is the one register(api) adds, serving the bundled page; the parent page stands in for the Control UI.
 * The real gateway's tab (its auth grant included) is covered by test/host/operator-tools.test.ts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HttpRoute } from "../../src/host/openclaw-types.js";
import plugin, { INSPECTOR_PATH } from "../../src/plugin.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { fallbackDatabase } from "../repair/repair-fixture.js";
import { launchChromium, nodePoint, pixelCounts } from "./browser.js";

const FALLBACK = "#e8590c";

let browser: Browser;
let server: Server;
let port: number;
let page: Page;
let harness: Awaited<ReturnType<typeof fallbackDatabase>>;
/** Every request the frame made under the route, and whether it was a navigation of the frame. */
const requests: { url: string; navigation: boolean }[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  harness = await fallbackDatabase();
  const api = new FakePluginApi({ databasePath: harness.databasePath });
  const routes: HttpRoute[] = [];
  Object.assign(api, {
    registerHttpRoute: (route: HttpRoute) => routes.push(route),
    session: { controls: { registerControlUiDescriptor: () => undefined } },
  });
  plugin.register(api);
  const route = routes.find((candidate) => candidate.path === INSPECTOR_PATH)!;
  server = createServer((request, response) => {
    if (request.url === "/control-ui") {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><title>Control UI</title><iframe sandbox="allow-scripts" src="${INSPECTOR_PATH}/" style="width:1400px;height:860px;border:0"></iframe>`);
      return;
    }
    void route.handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on("request", (request) => {
    if (new URL(request.url()).pathname.startsWith(INSPECTOR_PATH)) requests.push({ url: request.url(), navigation: request.isNavigationRequest() });
  });
  page.on("console", (message) => { if (message.type() === "error") consoleErrors.push(message.text()); });
  await page.goto(`http://127.0.0.1:${port}/control-ui`);
  await ready();
});

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

function frame(): Frame {
  const found = page.frames().find((candidate) => new URL(candidate.url()).pathname === `${INSPECTOR_PATH}/`);
  if (!found) throw new Error(`No frame at ${INSPECTOR_PATH}/ (frames: ${page.frames().map((candidate) => candidate.url()).join(", ")})`);
  return found;
}

/** Waits for the frame's page to have shown its view (after each navigation of the frame). */
async function ready(query?: RegExp): Promise<Frame> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const at = page.frames().find((candidate) => new URL(candidate.url()).pathname === `${INSPECTOR_PATH}/`);
    if (at && (query === undefined || query.test(new URL(at.url()).search))) break;
    if (Date.now() > deadline) throw new Error(`The frame did not reach ${query} (frames: ${page.frames().map((candidate) => candidate.url()).join(", ")})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await frame().waitForSelector("body[data-ready='true']", { timeout: 60_000 });
  return frame();
}

describe("the Control UI tab's page in a sandboxed frame", () => {
  it("shows the conversations and draws the DAG with no script read: only navigations of the frame reach the route", async () => {
    const shown = frame();
    expect(await shown.evaluate(() => window.origin)).toBe("null"); // the frame's origin is opaque, as in OpenClaw
    const summaries = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n;
    expect(await shown.getAttribute("#dag", "data-node-count")).toBe(String(summaries));
    expect(await shown.textContent("#conversations")).toMatch(/#1 agent:main:main[^]*\d+ fallback/);
    expect(await shown.textContent("#mode")).toContain("read-only");
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((request) => !request.navigation)).toEqual([]);
    expect(consoleErrors.filter((text) => /CORS|blocked|Refused/i.test(text))).toEqual([]);
  });

  it("opens a node clicked in the graph: the frame navigates to the node's view, its text and lineage shown", async () => {
    const condensed = harness.db.get<{ summary_id: string; content: string }>("SELECT summary_id, content FROM summaries WHERE kind = 'condensed' LIMIT 1")!;
    const box = (await page.locator("iframe").boundingBox())!;
    const point = await nodePoint(frame(), condensed.summary_id); // in the frame's document: the frame's box is added
    const clicked = performance.now();
    await page.mouse.click(box.x + point.x, box.y + point.y);
    const shown = await ready(new RegExp(`node=${condensed.summary_id}`));
    const summaries = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n;
    console.log(`[inspector tab] a node's view: ${Math.round(performance.now() - clicked)} ms from the click to the page ready (${summaries} summaries, ${(await shown.content()).length} characters of page)`);
    expect(await shown.textContent("#node-panel h3")).toBe(condensed.summary_id);
    expect(await shown.textContent("#node-content")).toBe(condensed.content);
    expect(await shown.evaluate(() => (window as any).lcmInspector.cy.$(":selected").id())).toBe(condensed.summary_id);
    expect(await shown.textContent("#node-panel")).toContain("Read-only: repairs need"); // the grant allows reads only
    // A parent named in the lineage opens the same way.
    await shown.locator("#node-panel button.link").first().click();
    const parent = await ready(/node=sum_/);
    expect(await parent.textContent("#node-panel h3")).not.toBe(condensed.summary_id);
    expect(await parent.textContent("#node-panel")).toMatch(/source messages|parents/);
  });

  it("searches with the lcm_grep engine (its button asks for the search view) and opens a hit in the DAG", async () => {
    const shown = frame();
    await shown.click("button[data-tab='search']");
    await shown.fill("#search-input", "markert7");
    await shown.click("#search-run");
    const results = await ready(/tab=search.*&q=markert7/);
    expect(await results.textContent("#search-count")).toMatch(/^[1-9]\d* matches/);
    expect(await results.inputValue("#search-input")).toBe("markert7");
    const link = results.locator("#search-results button.link", { hasText: "in the DAG" }).first();
    const covering = /open (sum_[0-9a-f]{16}) in the DAG/.exec((await link.textContent())!)![1]!;
    await link.click();
    const opened = await ready(new RegExp(`node=${covering}`));
    expect(await opened.textContent("#node-panel h3")).toBe(covering);
    expect(await opened.isHidden("#view-search")).toBe(true);
  });

  it("shows the context against the budget, and draws the node shapes in colour", async () => {
    await frame().click("button[data-tab='context']");
    const context = await ready(/tab=context/);
    const rows = await context.locator("#context-items tr").count();
    expect(rows - 1).toBeGreaterThan(0);
    expect(rows - 1).toBeLessThanOrEqual(harness.db.get<{ n: number }>("SELECT count(*) AS n FROM context_items")!.n);
    await context.click("button[data-tab='dag']");
    const dag = await ready(/^(?!.*tab=)/);
    await dag.click("#fit");
    await page.waitForTimeout(300);
    const png = await page.locator("iframe").screenshot();
    const counts = await pixelCounts(page, png, { fallback: FALLBACK });
    expect(counts.inked / counts.total).toBeGreaterThan(0.02);
    expect(counts.near.fallback!).toBeGreaterThan(200);
    expect(requests.filter((request) => !request.navigation)).toEqual([]);
  });
});
