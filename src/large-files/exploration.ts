/**
 * Picks the explorer for a large file and returns its exploration summary: structured data and code are
 * described deterministically; text goes to the model when one is wired, else (or on failure) to the
 * deterministic text explorer. A structured file that does not parse is described as text. Never throws.
 */
import { exploreCode } from "./code-explorer.js";
import { exploreDelimited } from "./delimited-explorer.js";
import type { ContentKind } from "../text/file-types.js";
import { exploreJson, exploreJsonLines } from "./json-explorer.js";
import { exploreXml, exploreYaml } from "./markup-explorer.js";
import { MAX_SUMMARY_CHARS, clip } from "./summary-lines.js";
import { type TextCompletion, type TextSource, exploreTextDeterministic, exploreTextWithModel } from "./text-explorer.js";

export interface ExplorationDeps {
  /** The model for text files; absent means deterministic summaries only. */
  completion?: TextCompletion;
  timeoutMs: number;
  /** Told why an explorer gave up (bad JSON, model failure), for the log. */
  onFallback(reason: string): void;
}

export interface Exploration {
  summary: string;
  /** json, jsonl, csv, tsv, yaml, xml, code:<language>, text:model or text:fallback. */
  explorer: string;
}

export async function exploreContent(source: TextSource, kind: ContentKind, deps: ExplorationDeps): Promise<Exploration> {
  if (kind.kind !== "text") {
    const label = kind.kind === "code" ? `code:${kind.language}` : kind.format;
    try {
      return { summary: clip(exploreDeterministic(source.content, kind), MAX_SUMMARY_CHARS), explorer: label };
    } catch (error) {
      deps.onFallback(`the ${label} explorer could not read ${source.fileName ?? "the content"} (${describe(error)}); described as text`);
    }
  }
  if (deps.completion) {
    const summary = await exploreTextWithModel(source, deps.completion, deps.timeoutMs, (reason) =>
      deps.onFallback(`the model summary of ${source.fileName ?? "the content"} failed (${reason}); used the deterministic summary`),
    );
    if (summary !== null) return { summary: clip(summary, MAX_SUMMARY_CHARS), explorer: "text:model" };
  }
  return { summary: clip(exploreTextDeterministic(source), MAX_SUMMARY_CHARS), explorer: "text:fallback" };
}

function exploreDeterministic(content: string, kind: Exclude<ContentKind, { kind: "text" }>): string {
  if (kind.kind === "code") return exploreCode(content, kind.language);
  switch (kind.format) {
    case "json":
      return exploreJson(content);
    case "jsonl":
      return exploreJsonLines(content);
    case "csv":
    case "tsv":
      return exploreDelimited(content, kind.format);
    case "yaml":
      return exploreYaml(content);
    case "xml":
      return exploreXml(content);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
