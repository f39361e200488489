import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Relative imports of every module under src/ (type-only imports included: a cycle of types is still a cycle). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = [...text.matchAll(/(?:import|export)[^'"]*?from\s+["'](\.{1,2}\/[^"']+)["']/g)].map((match) =>
      resolve(dirname(file), match[1]!.replace(/\.js$/, ".ts")),
    );
    graph.set(file, targets);
  }
  return graph;
}

function findCycle(graph: Map<string, string[]>): string[] | null {
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | null => {
    if (state.get(node) === "done") return null;
    if (state.get(node) === "visiting") return [...stack.slice(stack.indexOf(node)), node];
    state.set(node, "visiting");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(node, "done");
    return null;
  };
  for (const node of graph.keys()) {
    const cycle = visit(node);
    if (cycle) return cycle;
  }
  return null;
}

describe("the module graph", () => {
  it("has no import cycles", () => {
    const cycle = findCycle(importGraph());
    expect(cycle?.map((file) => relative(SRC, file)) ?? null).toBeNull();
  });

  it("keeps the host API in the composition root: only plugin.ts registers with OpenClaw", () => {
    const offenders = sourceFiles(SRC).filter(
      (file) => !file.endsWith("plugin.ts") && /\.register(ContextEngine|Tool|Command)\(/.test(readFileSync(file, "utf8")),
    );
    expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
  });

  it("never imports OpenClaw at module load", () => {
    const offenders = sourceFiles(SRC).filter((file) => /from\s+["']openclaw/.test(readFileSync(file, "utf8")));
    expect(offenders.map((file) => relative(SRC, file))).toEqual([]);
  });
});
