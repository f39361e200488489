import { describe, expect, it } from "vitest";
import { exploreCode } from "../../src/large-files/code-explorer.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { generateTypeScriptSource } from "./generated-inputs.js";

const tokens = new DefaultTokenEstimator();

describe("code explorer", () => {
  it("outlines a 10,000-line TypeScript file: imports, export counts by kind, signatures without bodies", () => {
    const summary = exploreCode(generateTypeScriptSource(10_000), "typescript");
    expect(summary).toContain("TypeScript source: 10,000 lines");
    expect(summary).toContain("Imports (3): node:fs/promises, node:path, ./logger.js");
    expect(summary).toMatch(/Exported\/public declarations \(1,\d{3}\): \d{3} function, \d{3} interface, \d{3} class\./);
    expect(summary).toContain("- export function parseRecords0(input: string, options: { strict: boolean } = { strict: false }): Record0[]");
    expect(summary).toContain("- export class Repository0 extends BaseRepository");
    expect(summary).not.toContain("input.split");
    expect(summary).toMatch(/- … and 1,\d{3} more/);
    expect(summary).toMatch(/Also \d+ non-public top-level declarations\./);
    expect(tokens.estimate(summary)).toBeLessThanOrEqual(450);
  });

  it("joins a signature that wraps over several lines and cuts arrow functions at the arrow", () => {
    const source = [
      "export async function load(",
      "  path: string,",
      "  options: Options,",
      "): Promise<Buffer> {",
      "  return read(path);",
      "}",
      "export const add = (a: number, b: number): number => a + b;",
    ].join("\n");
    const summary = exploreCode(source, "typescript");
    expect(summary).toContain("- export async function load( path: string, options: Options, ): Promise<Buffer>");
    expect(summary).toContain("- export const add = (a: number, b: number): number =>");
  });

  it("lists JavaScript imports from require and CommonJS exports", () => {
    const summary = exploreCode('const fs = require("fs");\nmodule.exports = { run };\nfunction run() {}\n', "javascript");
    expect(summary).toContain("Imports (1): fs");
    expect(summary).toContain("- module.exports = { run }");
  });

  it("outlines Python: imports and public top-level defs and classes, not private or nested ones", () => {
    const source = [
      "import os, sys",
      "from collections import OrderedDict",
      "class Store(Base):",
      "    def get(self, key):",
      "        return 1",
      "def load(path: str, *, strict: bool = False) -> dict:",
      "    pass",
      "async def fetch(url):",
      "    pass",
      "def _private():",
      "    pass",
    ].join("\n");
    const summary = exploreCode(source, "python");
    expect(summary).toContain("Imports (3): os, sys, collections");
    expect(summary).toContain("- class Store(Base)");
    expect(summary).toContain("- def load(path: str, *, strict: bool = False) -> dict");
    expect(summary).toContain("- async def fetch(url)");
    expect(summary).not.toContain("def get");
    expect(summary).toContain("Also 1 non-public top-level declarations.");
  });

  it("outlines Go: import blocks, exported funcs, methods and types", () => {
    const source = [
      "package store",
      "import (",
      '  "context"',
      '  db "database/sql"',
      ")",
      "type Repo struct {",
      "  db *db.DB",
      "}",
      "func (r *Repo) Save(ctx context.Context, item Item) error {",
      "  return nil",
      "}",
      "func helper() {}",
      "func New() *Repo { return &Repo{} }",
    ].join("\n");
    const summary = exploreCode(source, "go");
    expect(summary).toContain("Imports (2): context, database/sql");
    expect(summary).toContain("- type Repo struct");
    expect(summary).toContain("- func (r *Repo) Save(ctx context.Context, item Item) error");
    expect(summary).toContain("- func New() *Repo");
    expect(summary).not.toContain("helper");
  });

  it("outlines Rust: use lines and pub items", () => {
    const source = "use std::io;\nuse crate::store::{Repo, Item};\npub struct Cache {\n}\npub fn open(path: &str) -> io::Result<Cache> {\n}\nfn private() {}\npub(crate) enum Mode { A }\n";
    const summary = exploreCode(source, "rust");
    expect(summary).toContain("Imports (3): std::io, crate::store::{Repo, Item}");
    expect(summary).toContain("- pub struct Cache");
    expect(summary).toContain("- pub fn open(path: &str) -> io::Result<Cache>");
    expect(summary).toContain("- pub(crate) enum Mode");
  });

  it("outlines Java: imports, public types and methods, not fields", () => {
    const source = [
      "import java.util.List;",
      "import static org.junit.Assert.*;",
      "public final class Orders {",
      "    public static final int LIMIT = 5;",
      "    public List<Order> find(String customer, int limit) {",
      "        return null;",
      "    }",
      "    private void audit() {}",
      "}",
    ].join("\n");
    const summary = exploreCode(source, "java");
    expect(summary).toContain("Imports (2): java.util.List, org.junit.Assert.*");
    expect(summary).toContain("- public final class Orders");
    expect(summary).toContain("- public List<Order> find(String customer, int limit)");
    expect(summary).not.toContain("LIMIT");
  });

  it("outlines C and C++: includes, functions, types; static functions count as non-public", () => {
    const c = '#include <stdio.h>\n#include "store.h"\nstruct point {\n};\nint main(int argc, char **argv) {\n  if (argc) return 1;\n}\nstatic void helper(void) {}\n';
    const cSummary = exploreCode(c, "c");
    expect(cSummary).toContain('Imports (2): <stdio.h>, "store.h"');
    expect(cSummary).toContain("- int main(int argc, char **argv)");
    expect(cSummary).toContain("- struct point");
    expect(cSummary).toContain("Also 1 non-public top-level declarations.");
    const cpp = "#include <vector>\nnamespace geo {\nclass Shape {\n};\n}\nstd::vector<int> Shape::corners(const Shape& s) const {\n}\ntemplate <typename T> T twice(T v) { return v * 2; }\n";
    const cppSummary = exploreCode(cpp, "cpp");
    expect(cppSummary).toContain("- namespace geo");
    expect(cppSummary).toContain("- class Shape");
    expect(cppSummary).toContain("- std::vector<int> Shape::corners(const Shape& s) const");
    expect(cppSummary).toContain("- template <typename T> T twice(T v)");
  });
});
