import { describe, expect, it } from "vitest";
import { exploreDelimited } from "../../src/large-files/delimited-explorer.js";
import { exploreContent } from "../../src/large-files/exploration.js";
import { classifyContent } from "../../src/text/file-types.js";
import { exploreJson, exploreJsonLines } from "../../src/large-files/json-explorer.js";
import { exploreXml, exploreYaml } from "../../src/large-files/markup-explorer.js";
import { MAX_SUMMARY_CHARS } from "../../src/large-files/summary-lines.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { generateCsv, generateJsonDocument } from "./generated-inputs.js";

const tokens = new DefaultTokenEstimator();
/** "A few hundred tokens": every summary stays at or under 450 tokens (MAX_SUMMARY_CHARS / 4 + margin). */
const SUMMARY_TOKEN_CAP = 450;

describe("JSON explorer", () => {
  it("describes a 2 MB document by its keys, its largest array, record fields and a sample, in a few hundred tokens", () => {
    const json = generateJsonDocument();
    expect(json.length).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    const summary = exploreJson(json);
    const userCount = (JSON.parse(json) as { users: unknown[] }).users.length;
    expect(summary).toContain("JSON document: object {meta, users}");
    expect(summary).toContain("- meta: object {generator, version, marker, exportedAt}");
    expect(summary).toContain(`- users: array[${userCount.toLocaleString("en-US")}] of object {id, name, email, active, score, tags, address}`);
    expect(summary).toContain("Record fields (7, from 200 sampled): id: number, name: string, email: string, active: boolean");
    expect(summary).toContain('First item: {"id":1,"name":"User 1"');
    expect(summary).toContain("nesting depth 4");
    expect(tokens.estimate(summary)).toBeLessThanOrEqual(SUMMARY_TOKEN_CAP);
  });

  it("describes a root array and caps a document with thousands of keys", () => {
    expect(exploreJson(JSON.stringify([{ a: 1 }, { a: 2, b: "x" }]))).toContain("The root array has 2 items.");
    const wide = JSON.stringify(Object.fromEntries(Array.from({ length: 5_000 }, (_, index) => [`key${index}`, index])));
    const summary = exploreJson(wide);
    expect(summary).toContain("Top-level keys (5,000):");
    expect(summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
  });

  it("throws on text that is not JSON, so the caller can fall back", () => {
    expect(() => exploreJson("{ not json")).toThrow();
  });

  it("describes JSON Lines by record count, fields and the first and last records", () => {
    const lines = Array.from({ length: 3_000 }, (_, id) => JSON.stringify({ id, type: id % 2 ? "click" : "view" }));
    const summary = exploreJsonLines(`${lines.join("\n")}\nnot json`);
    expect(summary).toContain("JSON Lines: 3,001 records.");
    expect(summary).toContain("Record fields (2, from 200 sampled): id: number, type: string");
    expect(summary).toContain('First item: {"id":0,"type":"view"}');
    expect(summary).toContain("Last record: not json");
  });
});

describe("CSV and TSV explorer", () => {
  it("counts 50,000 rows, names the columns with types and samples, shows the first rows", () => {
    const summary = exploreDelimited(generateCsv(50_000), "csv");
    expect(summary).toContain('CSV table: 50,000 rows × 8 columns (plus a header row), delimiter ",".');
    expect(summary).toContain('id (integer, e.g. "1")');
    expect(summary).toContain('signup_date (date, e.g. "2025-03-02")');
    expect(summary).toContain('active (boolean, e.g. "false")');
    expect(summary).toContain('score (number, e.g. "0.1")');
    expect(summary).toContain("city (text, 6 distinct values");
    expect(summary).toMatch(/^Row: 1, MARKER_CSV_91bc, /m);
    expect(tokens.estimate(summary)).toBeLessThanOrEqual(SUMMARY_TOKEN_CAP);
  });

  it("keeps quoted commas and line breaks inside one field", () => {
    const csv = 'name,notes\n"Doe, Jane","line one\nline two"\nBob,plain\n';
    const summary = exploreDelimited(csv, "csv");
    expect(summary).toContain("CSV table: 2 rows × 2 columns");
    expect(summary).toContain("Row: Doe, Jane, line one line two");
  });

  it("reads TSV with tabs and guesses semicolon-separated CSV", () => {
    expect(exploreDelimited("a\tb\n1\t2\n3\t4\n", "tsv")).toContain("TSV table: 2 rows × 2 columns (plus a header row), delimiter tab.");
    expect(exploreDelimited("a;b\n1;2\n", "csv")).toContain('delimiter ";"');
  });
});

describe("YAML and XML explorers", () => {
  it("lists YAML top-level keys with scalars, mappings and lists", () => {
    const yaml = "name: demo\nservices:\n  web:\n    image: nginx\n  db:\n    image: postgres\nsteps:\n  - build\n  - test\nurl: http://x.test/a\n---\nsecond: doc\n";
    const summary = exploreYaml(yaml);
    expect(summary).toContain("2 documents");
    expect(summary).toContain('- name: scalar "demo"');
    expect(summary).toContain("- services: mapping {web, db}");
    expect(summary).toContain("- steps: list of 2 items");
    expect(summary).toContain('- url: scalar "http://x.test/a"');
  });

  it("describes XML by root, children, element and attribute names, ignoring comments and CDATA", () => {
    const books = Array.from({ length: 500 }, (_, id) => `  <book id="${id}" lang="en"><title>T${id}</title></book>`).join("\n");
    const xml = `<?xml version="1.0"?>\n<!-- <ghost/> -->\n<catalog version="2">\n${books}\n<![CDATA[<phantom>]]>\n</catalog>`;
    const summary = exploreXml(xml);
    expect(summary).toContain('XML document: root <catalog version="2">, 1,001 elements, nesting depth 3');
    expect(summary).toContain("Children of the root: <book> ×500");
    expect(summary).toContain("Attributes: version, id, lang");
    expect(summary).toContain('First child: <book id="0" lang="en"><title>T0</title></book>');
    expect(summary).not.toMatch(/ghost|phantom/);
  });
});

describe("explorer selection", () => {
  it("picks the explorer by extension, then mime type, then by looking at the content", () => {
    expect(classifyContent("data.json", null, "")).toEqual({ kind: "structured", format: "json" });
    expect(classifyContent("export", "text/csv; charset=utf-8", "")).toEqual({ kind: "structured", format: "csv" });
    expect(classifyContent("main.py", "text/plain", "")).toEqual({ kind: "code", language: "python" });
    expect(classifyContent(null, "application/vnd.api+json", "")).toEqual({ kind: "structured", format: "json" });
    expect(classifyContent("exec-output", null, '{"a": [1, 2]}')).toEqual({ kind: "structured", format: "json" });
    expect(classifyContent(null, null, '{"a":1}\n{"a":2}\n{"a":3}')).toEqual({ kind: "structured", format: "jsonl" });
    expect(classifyContent(null, null, '<?xml version="1.0"?><a/>')).toEqual({ kind: "structured", format: "xml" });
    expect(classifyContent("paper.pdf", "application/pdf", "{ looks like json")).toEqual({ kind: "text" });
  });

  it("describes a structured file that does not parse as text, and says why", async () => {
    const reasons: string[] = [];
    const result = await exploreContent({ content: "{ broken", fileName: "bad.json", mimeType: "application/json" }, { kind: "structured", format: "json" }, {
      timeoutMs: 1_000,
      onFallback: (reason) => reasons.push(reason),
    });
    expect(result.explorer).toBe("text:fallback");
    expect(reasons[0]).toMatch(/the json explorer could not read bad\.json/);
  });
});
