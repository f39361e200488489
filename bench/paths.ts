/**
 * Where the benchmark keeps things, wherever its code runs from: bench/ under tsx, or the compiled copy in
 * bench/.data/build/bench/ (what `npm run bench` runs, so the figures are those of the code as shipped: tsc
 * output, without the per-closure naming helpers a dev-time transpiler adds).
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findRoot(start: string): string {
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(join(directory, "package.json"))) return directory;
    if (dirname(directory) === directory) throw new Error(`No package.json above ${start}.`);
  }
}

export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));
export const DATA_DIR = join(ROOT, "bench", ".data");
export const BUILD_DIR = join(DATA_DIR, "build");
export const RESULTS_DIR = join(ROOT, "bench", "results");

/** node arguments that run another benchmark script (`name`: relative path without extension) the way this one runs. */
export function scriptArgs(fromUrl: string, name: string): string[] {
  const here = fileURLToPath(fromUrl);
  const isSource = here.endsWith(".ts");
  const script = join(dirname(here), `${name}${isSource ? ".ts" : ".js"}`);
  return isSource ? ["--import", "tsx", script] : [script];
}
