/// <reference lib="dom" />
/**
 * What a new user does after `npm run demo`: the demo's database opened with the command it prints
 * (`lcm inspect --db …`, here with --write), in a real headless Chromium. The DAG's node count against the database,
 * a node opened by a click, the planted detail found by a search, a repair by hand applied and undone, and a
 * screenshot that is not blank and shows the node colours.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECALL_DETAIL } from "../../scripts/demo-session.js";
import { tempDir } from "../helpers/temp-dir.js";
import { launchChromium, nodePoint, pixelCounts } from "./browser.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const MODEL = "#2f6fdf";

let browser: Browser;
let page: Page;
let inspector: ChildProcess;
let database: string;
let url: string;

const one = <T>(sql: string, ...params: (string | number)[]): T => {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    return db.prepare(sql).get(...params) as T;
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  database = join(tempDir(), "demo.db");
  const demo = spawnSync(process.execPath, ["--import", "tsx", join(ROOT, "scripts/demo.ts"), "--turns", "60", "--db", database], {
    cwd: ROOT, encoding: "utf8", env: { ...process.env, ANTHROPIC_API_KEY: "" }, timeout: 240_000,
  });
  expect(demo.status, demo.stderr).toBe(0);
  expect(demo.stdout).toContain(`npx lcm inspect --db ${database}`);
  inspector = spawn(process.execPath, ["--import", "tsx", join(ROOT, "src/cli/bin.ts"), "inspect", "--db", database, "--write"], {
    cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ANTHROPIC_API_KEY: "" },
  });
  url = await new Promise<string>((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => reject(new Error(`lcm inspect printed no address in 60 s: ${said}`)), 60_000);
    inspector.stderr!.on("data", (chunk: Buffer) => {
      said += chunk.toString();
      const found = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(said);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]!);
      }
    });
    inspector.once("exit", (code) => reject(new Error(`lcm inspect exited (${code}): ${said}`)));
  });
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
  await page.goto(url);
  await page.waitForSelector("body[data-ready='true']");
}, 300_000);

afterAll(async () => {
  await browser?.close();
  if (inspector?.pid && inspector.exitCode === null) process.kill(inspector.pid, "SIGTERM");
});

describe("the demo's database in the inspector (lcm inspect --write)", () => {
  it("draws every summary the demo wrote, and opens one by a click", async () => {
    const { n } = one<{ n: number }>("SELECT count(*) AS n FROM summaries");
    expect(n).toBeGreaterThan(0);
    expect(await page.getAttribute("#dag", "data-node-count")).toBe(String(n));
    const condensed = one<{ summary_id: string; content: string }>("SELECT summary_id, content FROM summaries ORDER BY depth DESC, id LIMIT 1");
    const point = await nodePoint(page, condensed.summary_id);
    await page.mouse.click(point.x, point.y);
    await page.waitForFunction((id) => document.querySelector("#node-panel h3")?.textContent === id, condensed.summary_id);
    expect(await page.textContent("#node-content")).toBe(condensed.content);
    expect(new URL(page.url()).searchParams.get("node")).toBe(condensed.summary_id); // the view is a link
  });

  it("finds the detail the demo planted in turn 2", async () => {
    await page.click("button[data-tab='search']");
    await page.fill("#search-input", RECALL_DETAIL);
    await page.press("#search-input", "Enter");
    await page.waitForSelector("#search-count");
    expect(await page.textContent("#search-count")).toMatch(/^[1-9]\d* matches/);
    expect(await page.textContent("#search-results")).toContain(RECALL_DETAIL);
  });

  it("rewrites a summary by hand, applied and undone, and shows the DAG in colour", async () => {
    const target = one<{ summary_id: string; content: string }>(
      "SELECT s.summary_id, s.content FROM summaries s JOIN context_items c ON c.summary_id = s.id ORDER BY c.ordinal LIMIT 1");
    await page.goto(`${url}?node=${target.summary_id}`);
    await page.waitForSelector("body[data-ready='true']");
    await page.waitForFunction((id) => document.querySelector("#node-panel h3")?.textContent === id, target.summary_id);
    await page.click("text=Rewrite by hand");
    await page.fill("#rewrite-text", "Rewritten in the inspector: the staging deploy and its rotated secret.");
    await page.click("#repair-area >> text=Preview");
    await page.waitForSelector("#repair-preview");
    expect((await page.locator("#repair-preview .text").allTextContents())[0]).toBe(target.content);
    await page.click("#repair-area >> text=Apply");
    await page.waitForSelector("#repair-done");
    expect(one<{ content: string }>("SELECT content FROM summaries WHERE summary_id = ?", target.summary_id).content)
      .toBe("Rewritten in the inspector: the staging deploy and its rotated secret.");
    await page.click("#repair-area >> text=Undo");
    await page.waitForSelector("#repair-undone");
    expect(one<{ content: string }>("SELECT content FROM summaries WHERE summary_id = ?", target.summary_id).content).toBe(target.content);
    await page.click("#fit");
    await page.waitForTimeout(300);
    const counts = await pixelCounts(page, await page.screenshot(), { model: MODEL });
    expect(counts.inked / counts.total).toBeGreaterThan(0.02);
    expect(counts.near.model!).toBeGreaterThan(200);
  });
});
