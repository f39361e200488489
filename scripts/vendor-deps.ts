/**
 * Bundles the third-party modules the built plugin imports (TypeBox, commander, json5, cli-progress, the MCP SDK)
 * into dist/vendor with esbuild, and points dist's imports at them: the published package has no runtime
 * dependencies. Part of `npm run build`.
 *
 * Why: OpenClaw 2026.9.6 copies a plugin's package and its whole dependency tree, file by file and synchronously,
 * each time it loads the plugin into a registry (gateway start, the agent runtime's registry, the first model call of
 * a context engine). With the 103 packages (4,812 files) these dependencies pulled in, each copy held the gateway's
 * event loop 5-10 s (CPU profile of a host-suite gateway, capturePluginGenerationArtifact); the gateway answered
 * nothing meanwhile. The vendored modules are a handful of files.
 *
 * `@anthropic-ai/sdk` stays a bare, optional import: the standalone summarizer loads it when the user installed it.
 */
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { vendorBundle } from "./vendor-bundle.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const vendor = join(dist, "vendor");
/** Imported only when present: never bundled. */
const OPTIONAL = new Set(["@anthropic-ai/sdk"]);
/** Static `from "x"`, side-effect `import "x"` and dynamic `import("x")` of a bare specifier in tsc's output. */
const IMPORT = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])((?:@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*(?:\/[\w.-]+)*|node:[\w/]+)\2/g;

function jsFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (path === vendor) return [];
    if (statSync(path).isDirectory()) return jsFiles(path);
    return name.endsWith(".js") ? [path] : [];
  });
}

const isVendored = (specifier: string) => !specifier.startsWith("node:") && !OPTIONAL.has(specifier);
/** dist/vendor/<name>.js for a specifier: "@modelcontextprotocol/sdk/server/stdio.js" → "modelcontextprotocol-sdk-server-stdio". */
const vendorName = (specifier: string) => specifier.replace(/^@/, "").replace(/\.js$/, "").replace(/[^A-Za-z0-9]+/g, "-");

const started = performance.now();
const files = jsFiles(dist);
const specifiers = new Set<string>();
for (const file of files) {
  for (const match of readFileSync(file, "utf8").matchAll(IMPORT)) if (isVendored(match[3]!)) specifiers.add(match[3]!);
}

if (specifiers.size === 0) {
  console.log("vendored modules: dist imports none (already vendored, or nothing to vendor)");
  process.exit(0);
}
rmSync(vendor, { recursive: true, force: true });
const result = await vendorBundle(Object.fromEntries([...specifiers].map((specifier) => [vendorName(specifier), specifier])), vendor);

let rewritten = 0;
for (const file of files) {
  const text = readFileSync(file, "utf8");
  const next = text.replace(IMPORT, (whole, prefix: string, quote: string, specifier: string) => {
    if (!isVendored(specifier)) return whole;
    const target = relative(dirname(file), join(vendor, `${vendorName(specifier)}.js`)).split(sep).join("/");
    return `${prefix}${quote}${target.startsWith(".") ? target : `./${target}`}${quote}`;
  });
  if (next !== text) {
    writeFileSync(file, next);
    rewritten++;
  }
}
const outputs = Object.entries(result.outputs).filter(([path]) => path.endsWith(".js"));
const bytes = outputs.reduce((total, [, output]) => total + output.bytes, 0);
console.log(
  `vendored ${specifiers.size} modules (${[...specifiers].join(", ")}) into ${outputs.length} files, ${Math.round(bytes / 1024)} KB; ` +
    `${rewritten} files of dist import them; ${Math.round(performance.now() - started)} ms`,
);
