/**
 * Bundles the inspector's page (web/inspector: TypeScript, Cytoscape.js, d3-scale) into dist/inspector-web with
 * esbuild, so the page is served from the plugin's own files with no network. Part of `npm run build`.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "web", "inspector");
const target = join(root, "dist", "inspector-web");

mkdirSync(target, { recursive: true });
const started = performance.now();
const result = await build({
  entryPoints: [join(source, "main.ts")], outfile: join(target, "app.js"), bundle: true, format: "esm", minify: true,
  target: "es2022", platform: "browser", legalComments: "linked", metafile: true, logLevel: "warning",
});
copyFileSync(join(source, "index.html"), join(target, "index.html"));
copyFileSync(join(source, "app.css"), join(target, "app.css"));
const bytes = Object.values(result.metafile.outputs).reduce((total, output) => total + output.bytes, 0);
console.log(`inspector page: ${target} (${Math.round(bytes / 1024)} KB) in ${Math.round(performance.now() - started)} ms`);
