/**
 * Realistic large inputs, generated deterministically: a 2 MB JSON document, a 50,000-row CSV, a 10,000-line
 * TypeScript file, a long application log and a Markdown report. Each carries a unique marker string so tests
 * can prove that the content is absent from the assembled context and present in the stored file.
 */

const CITIES = ["Lisbon", "Osaka", "Nairobi", "Quito", "Tromsø", "Adelaide"];
const LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "INFO", "ERROR", "INFO"];

/** A pretty-printed JSON document of at least 2 MiB: `{ meta, users: [...] }`. */
export function generateJsonDocument(marker = "MARKER_JSON_7f3a"): string {
  const users: unknown[] = [];
  const document = { meta: { generator: "lcm-tests", version: 3, marker, exportedAt: "2026-11-01T08:00:00Z" }, users };
  let size = 0;
  for (let id = 1; size < 2 * 1024 * 1024; id++) {
    const user = {
      id,
      name: `User ${id}`,
      email: `user${id}@example.test`,
      active: id % 3 !== 0,
      score: Math.round(((id * 7919) % 1000) * 1.5) / 10,
      tags: ["alpha", "beta", "gamma"].slice(0, (id % 3) + 1),
      address: { street: `${id} Main Street`, city: CITIES[id % CITIES.length], zip: String(10_000 + id) },
    };
    users.push(user);
    size += JSON.stringify(user, null, 2).length + 6;
  }
  return JSON.stringify(document, null, 2);
}

/** A CSV table with a header and `rows` data rows; some fields are quoted and hold commas. */
export function generateCsv(rows = 50_000, marker = "MARKER_CSV_91bc"): string {
  const lines = ["id,name,email,age,signup_date,active,score,city"];
  for (let id = 1; id <= rows; id++) {
    const name = id === 1 ? marker : id % 10 === 0 ? `"Doe, Jane ${id}"` : `Person ${id}`;
    const day = String((id % 28) + 1).padStart(2, "0");
    lines.push(`${id},${name},p${id}@example.test,${18 + (id % 60)},2025-03-${day},${id % 2 === 0},${(id % 1000) / 10},${CITIES[id % CITIES.length]}`);
  }
  return `${lines.join("\n")}\n`;
}

/** A TypeScript module of exactly `lines` lines with imports, exported functions, classes and interfaces. */
export function generateTypeScriptSource(lines = 10_000, marker = "MARKER_TS_55d0"): string {
  const out = [
    'import { readFile } from "node:fs/promises";',
    'import { join } from "node:path";',
    'import type { Logger } from "./logger.js";',
    `// ${marker}`,
    "",
  ];
  for (let index = 0; out.length < lines; index++) {
    out.push(
      `/** Parses record set ${index}. */`,
      `export function parseRecords${index}(input: string, options: { strict: boolean } = { strict: false }): Record${index}[] {`,
      "  const rows = input.split(\"\\n\");",
      "  return rows.filter((row) => row.length > 0 || options.strict).map((row) => ({ id: row }));",
      "}",
      "",
      `export interface Record${index} {`,
      "  id: string;",
      "}",
      "",
      `export class Repository${index} extends BaseRepository {`,
      "  constructor(private readonly logger: Logger) {",
      "    super();",
      "  }",
      "}",
      "",
      `function helper${index}(value: number): number {`,
      "  return value * 2;",
      "}",
      "",
    );
  }
  return out.slice(0, lines).join("\n");
}

/** An application log of `lines` lines with ISO timestamps and levels. */
export function generateLog(lines = 60_000, marker = "MARKER_LOG_c4e2"): string {
  const start = Date.UTC(2026, 10, 1, 0, 0, 0);
  const out: string[] = [];
  for (let index = 0; index < lines; index++) {
    const at = new Date(start + index * 1_500).toISOString();
    const level = LEVELS[index % LEVELS.length];
    const detail = index === 0 ? marker : `request ${index} took ${(index * 37) % 900} ms`;
    out.push(`${at} ${level} [worker-${index % 8}] ${detail}`);
  }
  return out.join("\n");
}

/** A Markdown report with headings and paragraphs, about `paragraphs` × 600 characters. */
export function generateMarkdown(paragraphs = 400, marker = "MARKER_MD_0e91"): string {
  const out = [`# Quarterly Infrastructure Report`, "", `Prepared for the platform team. ${marker}`, ""];
  for (let index = 0; index < paragraphs; index++) {
    if (index % 40 === 0) out.push(`## Section ${index / 40 + 1}: Findings`, "");
    out.push(
      `Paragraph ${index} describes latency, throughput and cost of cluster ${index % 12}. The median latency was ` +
        `${(index * 13) % 200} ms and the error budget stayed within limits. Operators noted the change of the ` +
        "storage tier and the rollout of the new scheduler, which reduced queueing during peak hours by a margin " +
        "that the next quarter will confirm or refute with a longer observation window and more careful sampling.",
      "",
    );
  }
  return out.join("\n");
}

/** A user message text carrying one `<file>` block the way OpenClaw's media understanding writes it. */
export function fileBlock(name: string, mime: string | null, content: string): string {
  return `<file name="${name}"${mime ? ` mime="${mime}"` : ""}>\n${content}\n</file>`;
}
