/**
 * Exploration summaries of source files: imports, the exported (public) functions, classes and types with their
 * signatures and no bodies, what else is defined at the top level, and line counts. A line scan with one rule
 * set per language; signatures that wrap over several lines are joined until their parentheses balance.
 */
import { formatCount } from "./file-reference.js";
import type { CodeLanguage } from "../text/file-types.js";
import { SummaryLines, clip, squash } from "./summary-lines.js";

interface LanguageRules {
  label: string;
  /** Returns the imported module/header of an import line, or null. */
  importOf(line: string): string | null;
  /** Returns the signature when the line starts a public (exported) declaration, else null. */
  exportOf(line: string): string | null;
  /** Whether the line starts a declaration that is not public (counted, not listed). */
  isPrivateDeclaration(line: string): boolean;
}

const C_KEYWORDS = /^(if|for|while|switch|return|else|do|case|sizeof|typedef|using|namespace|template|static_assert)\b/;
const C_FUNCTION = /^(?!static\b)[A-Za-z_][\w\s*&:<>,~]*?[\s*&]([A-Za-z_~][\w:~]*)\s*\(/;
const TS_EXPORT = /^export\s+(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(function\*?|class|interface|type|enum|const|let|var|namespace)\b/;
const TS_PRIVATE = /^(async\s+)?(function\*?|class|interface|type|enum)\s+[A-Za-z_$]/;

const RULES: Record<CodeLanguage, LanguageRules> = {
  typescript: {
    label: "TypeScript",
    importOf: (line) => /^import\b.*?from\s+["']([^"']+)["']/.exec(line)?.[1] ?? /^import\s+["']([^"']+)["']/.exec(line)?.[1]
      ?? /\brequire\(\s*["']([^"']+)["']\s*\)/.exec(line)?.[1] ?? null,
    exportOf: (line) => (TS_EXPORT.test(line) ? line : /^export\s*\{/.test(line) ? line : null),
    isPrivateDeclaration: (line) => TS_PRIVATE.test(line),
  },
  javascript: {
    label: "JavaScript",
    importOf: (line) => RULES.typescript.importOf(line),
    exportOf: (line) => RULES.typescript.exportOf(line) ?? (/^(module\.)?exports\.?\w*\s*=/.test(line) ? line : null),
    isPrivateDeclaration: (line) => TS_PRIVATE.test(line),
  },
  python: {
    label: "Python",
    importOf: (line) => /^from\s+(\S+)\s+import\b/.exec(line)?.[1] ?? /^import\s+([\w.]+(?:\s*,\s*[\w.]+)*)/.exec(line)?.[1] ?? null,
    exportOf: (line) => (/^(async\s+)?def\s+[A-Za-z]\w*|^class\s+[A-Za-z]\w*/.test(line) ? line.replace(/:\s*(#.*)?$/, "") : null),
    isPrivateDeclaration: (line) => /^(async\s+)?def\s+_|^class\s+_/.test(line),
  },
  go: {
    label: "Go",
    importOf: (line) => /^import\s+(?:[\w.]+\s+)?"([^"]+)"/.exec(line)?.[1] ?? null,
    exportOf: (line) => (/^func\s+(\([^)]*\)\s*)?[A-Z]\w*|^type\s+[A-Z]\w*|^(var|const)\s+[A-Z]\w*/.test(line) ? line : null),
    isPrivateDeclaration: (line) => /^func\s+(\([^)]*\)\s*)?[a-z_]\w*|^type\s+[a-z_]\w*/.test(line),
  },
  rust: {
    label: "Rust",
    importOf: (line) => /^(?:pub\s+)?use\s+([^;]+);/.exec(line)?.[1] ?? /^extern\s+crate\s+(\w+)/.exec(line)?.[1] ?? null,
    exportOf: (line) =>
      /^pub(\([^)]*\))?\s+(async\s+|const\s+|unsafe\s+|extern\s+"[^"]*"\s+)*(fn|struct|enum|trait|type|mod|const|static|union)\b/.test(line)
        ? line : null,
    isPrivateDeclaration: (line) => /^(async\s+)?(fn|struct|enum|trait|impl\b|mod)\b/.test(line),
  },
  java: {
    label: "Java",
    importOf: (line) => /^import\s+(?:static\s+)?([\w.*]+)\s*;/.exec(line)?.[1] ?? null,
    exportOf: (line) => (/^\s{0,8}public\s+[^=;]*?(\(|\b(class|interface|enum|record)\b)/.test(line) ? line.trim() : null),
    isPrivateDeclaration: (line) => /^\s{0,8}(private|protected)\s+[^=;]*?\(/.test(line),
  },
  c: {
    label: "C",
    importOf: (line) => /^#\s*include\s+([<"][^>"]+[>"])/.exec(line)?.[1] ?? null,
    exportOf: (line) => cDeclaration(line),
    isPrivateDeclaration: (line) => /^static\s+[\w\s*]+\(/.test(line),
  },
  cpp: {
    label: "C++",
    importOf: (line) => RULES.c.importOf(line),
    exportOf: (line) => (/^(class|struct|enum(\s+class)?|namespace|template\s*<)\s*[\w<]/.test(line) ? line : cDeclaration(line)),
    isPrivateDeclaration: (line) => RULES.c.isPrivateDeclaration(line),
  },
};

function cDeclaration(line: string): string | null {
  if (/^\s/.test(line) || C_KEYWORDS.test(line) || line.startsWith("#")) return null;
  if (/^(struct|enum|union)\s+\w+\s*\{?\s*$/.test(line)) return line;
  return C_FUNCTION.test(line) ? line : null;
}

export function exploreCode(content: string, language: CodeLanguage): string {
  const rules = RULES[language];
  const lines = content.split("\n");
  const imports = new Set<string>();
  const exported: string[] = [];
  let privateCount = 0;
  let nonBlank = 0;
  let inBlockComment = false;
  let inImportBlock = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.replace(/\r$/, "");
    if (line.trim() !== "") nonBlank++;
    if (inBlockComment) {
      if (line.includes("*/")) inBlockComment = false;
      continue;
    }
    if (/^\s*\/\*/.test(line) && !line.includes("*/")) {
      inBlockComment = true;
      continue;
    }
    if (inImportBlock) {
      if (/^\s*\)/.test(line)) inImportBlock = false;
      else {
        const quoted = /"([^"]+)"/.exec(line)?.[1];
        if (quoted) imports.add(quoted);
      }
      continue;
    }
    if (language === "go" && /^import\s*\($/.test(line.trim())) {
      inImportBlock = true;
      continue;
    }
    const imported = rules.importOf(line);
    if (imported) {
      for (const name of imported.split(",")) imports.add(name.trim());
      continue;
    }
    const declaration = rules.exportOf(line);
    if (declaration !== null) exported.push(signature(lines, index, declaration));
    else if (rules.isPrivateDeclaration(line)) privateCount++;
  }
  const out = new SummaryLines();
  out.add(`${rules.label} source: ${formatCount(lines.length)} lines (${formatCount(nonBlank)} non-blank).`);
  out.addList(`Imports (${imports.size})`, [...imports], 360);
  if (exported.length > 0) {
    const heading = language === "python" ? "Top-level definitions" : "Exported/public declarations";
    out.add(`${heading} (${formatCount(exported.length)}): ${kindCounts(exported)}.`);
    let listed = 0;
    for (const item of exported) {
      if (out.remaining < 160 || !out.add(`- ${item}`, 150)) break;
      listed++;
    }
    if (listed < exported.length) out.add(`- … and ${formatCount(exported.length - listed)} more`);
  }
  if (privateCount > 0) out.add(`Also ${formatCount(privateCount)} non-public top-level declarations.`);
  return out.text();
}

const DECLARATION_KINDS = ["function", "class", "interface", "type", "enum", "struct", "trait", "def", "func", "fn", "mod", "namespace", "const", "record"];

/** "500 function, 500 class": how many declarations of each keyword (others count as "other"). */
function kindCounts(declarations: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const declaration of declarations) {
    const words = declaration.split(/[^\w]+/);
    const kind = DECLARATION_KINDS.find((candidate) => words.includes(candidate)) ?? "other";
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${formatCount(count)} ${kind}`).join(", ");
}

/** The declaration without its body: joined over up to six lines until parentheses balance, cut at `{` or `=>`. */
function signature(lines: readonly string[], start: number, first: string): string {
  let text = first.trim();
  for (let next = start + 1; next < Math.min(lines.length, start + 6) && unbalanced(text); next++) text += ` ${lines[next]!.trim()}`;
  const bodyStart = findBodyStart(text);
  if (bodyStart !== -1) text = text.slice(0, bodyStart);
  return clip(squash(text.replace(/[;:,]\s*$/, "")), 140);
}

function unbalanced(text: string): boolean {
  let depth = 0;
  for (const char of text) {
    if (char === "(") depth++;
    else if (char === ")") depth--;
  }
  return depth > 0;
}

/** Where the body begins: the first `{` or `=>` outside parentheses and type braces that follow `(`…`)`. */
function findBodyStart(text: string): number {
  let depth = 0;
  let seenParameters = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (char === "(") depth++;
    else if (char === ")") {
      depth--;
      if (depth === 0) seenParameters = true;
    } else if (depth === 0 && char === "{" && (seenParameters || /\b(class|interface|struct|enum|trait|impl|namespace)\b/.test(text.slice(0, index)))) {
      return index;
    } else if (depth === 0 && char === "=" && text[index + 1] === ">" && seenParameters) {
      return index + 2;
    }
  }
  return -1;
}
