/**
 * The esbuild step of scripts/vendor-deps.ts, on its own so a test can bundle a package the way the build does.
 */
import { isBuiltin } from "node:module";
import { build, type Metafile } from "esbuild";

/**
 * Bundles `entryPoints` (output name → specifier) as ESM into `outdir`. The CommonJS packages among them (commander,
 * cli-progress, pg) call `require` for Node's own modules, some of them only at run time: pg requires `net` each time
 * it opens a connection. In OpenClaw 2026.9.6 every `require` of a plugin's module passes the host's resolve hook,
 * which admits it through the plugin call that is running; a connection opened by work that outlived its hook
 * (retention's run on PostgreSQL) then failed with "Plugin invocation scope is closed". So the bundle imports the
 * Node modules its code requires statically, when it loads, and its `require` serves them from those imports; only
 * the optional packages it never bundles (pg-native) still go through Node's require.
 */
export async function vendorBundle(entryPoints: Record<string, string>, outdir: string): Promise<Metafile> {
  const options = {
    entryPoints, outdir, bundle: true, splitting: true, format: "esm", platform: "node", target: "node22", minify: true,
    chunkNames: "shared-[hash]", legalComments: "linked", metafile: true, logLevel: "warning",
  } as const;
  // First pass: which of Node's modules the bundled code requires.
  const probe = await build({ ...options, write: false, logLevel: "silent" });
  const builtins = [...new Set(Object.values(probe.metafile.outputs).flatMap((output) => output.imports)
    .filter((entry) => entry.external && entry.kind === "require-call" && isBuiltin(entry.path)).map((entry) => entry.path))].sort();
  const imports = builtins.map((name, index) => `import __lcmNode${index} from ${JSON.stringify(name.startsWith("node:") ? name : `node:${name}`)};`);
  const table = builtins.map((name, index) => `[${JSON.stringify(name)}, __lcmNode${index}]`).join(", ");
  const banner = [
    'import { createRequire as __lcmCreateRequire } from "node:module";',
    ...imports,
    `const __lcmNodeModules = new Map([${table}]);`,
    "const __lcmRequire = __lcmCreateRequire(import.meta.url);",
    "const require = Object.assign((id) => __lcmNodeModules.get(id) ?? __lcmRequire(id), { resolve: __lcmRequire.resolve, cache: __lcmRequire.cache });",
  ].join(" ");
  return (await build({ ...options, banner: { js: banner } })).metafile;
}
