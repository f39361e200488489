/**
 * Bundles the inspector's page (web/inspector: TypeScript, Cytoscape.js, d3-scale) into dist/inspector-web with
 * esbuild, so the page is served from the plugin's own files with no network. Part of `npm run build`. A classic
 * script (IIFE), not a module: the Control UI tab puts it inside the page, where a module would gain nothing.
 */
import { copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { PAGE_SCRIPT, PAGE_STYLE } from "../src/inspector/inspector-http.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "web", "inspector");
const target = join(root, "dist", "inspector-web");

mkdirSync(target, { recursive: true });
const started = performance.now();
const result = await build({
  entryPoints: [join(source, "main.ts")], outfile: join(target, "app.js"), bundle: true, format: "iife", minify: true,
  target: "es2022", platform: "browser", legalComments: "linked", metafile: true, logLevel: "warning",
});
// The Control UI tab puts the script inside the page (inspector-http.ts, inlinePage): it must not end its element.
const script = readFileSync(join(target, "app.js"), "utf8");
if (/<\/script|<!--/i.test(script)) throw new Error("The inspector's bundle holds </script or <!--: it cannot be put inside the page.");
const page = readFileSync(join(source, "index.html"), "utf8");
for (const marker of [PAGE_STYLE, PAGE_SCRIPT]) {
  if (!page.includes(marker)) throw new Error(`web/inspector/index.html lacks ${marker}, where the inline page puts its style and script.`);
}
copyFileSync(join(source, "index.html"), join(target, "index.html"));
copyFileSync(join(source, "app.css"), join(target, "app.css"));
const bytes = Object.values(result.metafile.outputs).reduce((total, output) => total + output.bytes, 0);
console.log(`inspector page: ${target} (${Math.round(bytes / 1024)} KB) in ${Math.round(performance.now() - started)} ms`);
