/// <reference lib="dom" />
/**
 * Headless Chromium for the inspector's end-to-end tests, driven by playwright-core (Debian's browser, with the flags
 * this machine needs: no sandbox as root, no background networking), and the screenshot checks: a PNG is decoded by
 * the browser itself and its pixels counted by colour.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { type Browser, chromium, type Frame, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Debian's Chromium, installed with apt-get when missing (never a browser a test tool downloads). */
export function ensureChromium(log: (line: string) => void = console.log): void {
  if (existsSync(CHROMIUM)) return;
  log(`${CHROMIUM} is missing: installing Debian's chromium`);
  execFileSync("apt-get", ["update", "-qq"], { stdio: "inherit" });
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** Pixels of a PNG screenshot: the share that is not near-white, and how many are near each named colour. */
export async function pixelCounts(page: Page, png: Buffer, colors: Record<string, string>): Promise<{ inked: number; total: number; near: Record<string, number> }> {
  return page.evaluate(async ({ data, colors }) => {
    const image = new Image();
    image.src = `data:image/png;base64,${data}`;
    await image.decode();
    const canvas = document.createElement("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext("2d")!;
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    const targets = Object.entries(colors).map(([name, hex]) => [name, parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)] as const);
    const near: Record<string, number> = Object.fromEntries(targets.map(([name]) => [name, 0]));
    let inked = 0;
    for (let index = 0; index < pixels.length; index += 4) {
      const [r, g, b] = [pixels[index]!, pixels[index + 1]!, pixels[index + 2]!];
      if (r < 235 || g < 235 || b < 235) inked++;
      for (const [name, tr, tg, tb] of targets) if (Math.abs(r - tr) + Math.abs(g - tg) + Math.abs(b - tb) < 30) near[name]!++;
    }
    return { inked, total: pixels.length / 4, near };
  }, { data: png.toString("base64"), colors });
}

/**
 * Where the inspector's graph draws a summary, in the coordinates of the document it is in (a frame's own, not its
 * page's), after zooming in to at least 2 and centring it, as a user would before clicking: at the fitted zoom, nodes
 * of one depth close in time overlap. Any running animation is finished first.
 */
export function nodePoint(target: Page | Frame, summaryId: string): Promise<{ x: number; y: number }> {
  return target.evaluate((id) => {
    const cy = (window as any).lcmInspector.cy;
    cy.stop(true, true);
    const node = cy.getElementById(id);
    cy.zoom(Math.max(cy.zoom(), 2));
    cy.center(node);
    const position = node.renderedPosition();
    const box = cy.container().getBoundingClientRect();
    return { x: box.left + position.x, y: box.top + position.y };
  }, summaryId);
}
