/**
 * Facts read from the sources of src/ (spec 026): each file's relative imports with their kind and line, its uses of
 * SQLite (node:sqlite, a constructed connection, a call that opens the backend) and its SQL literals, plus the
 * folder graph's strongly connected components. Shared by scripts/architecture-report.ts (the measure) and
 * test/architecture.test.ts (the rule), so the two cannot read the code differently. Reads files; writes nothing.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, relative, resolve, join } from "node:path";
import ts from "typescript";

/** Functions of the backend that open a connection; a call outside the backend is a composition root at work. */
const OPENING_FUNCTIONS = new Set([
  "openDatabase", "openSharedDatabase", "openSharedReadableDatabase", "openWorkerConnection", "openSqliteBackend",
]);
/** Classes whose construction opens a SQLite connection. */
const CONNECTION_CLASSES = new Set(["Database", "DatabaseSync"]);
/** SQL statements, upper case as the code base writes them; prose ("update the file") does not match. */
const SQL_STATEMENTS: readonly { keyword: string; pattern: RegExp }[] = [
  { keyword: "SELECT", pattern: /\bSELECT\s+(?:DISTINCT\s+)?(?:\S[\s\S]*?\bFROM\b|\d+\b|\*|[a-z_]+\()/ },
  { keyword: "INSERT", pattern: /\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b/ },
  { keyword: "UPDATE", pattern: /\bUPDATE\s+(?:OR\s+[A-Z]+\s+)?[a-z_][\w.]*\s+SET\b/ },
  { keyword: "DELETE", pattern: /\bDELETE\s+FROM\b/ },
  { keyword: "CREATE", pattern: /\bCREATE\s+(?:UNIQUE\s+|VIRTUAL\s+|TEMP\s+|TEMPORARY\s+)*(?:TABLE|INDEX|TRIGGER|VIEW)\b/ },
  { keyword: "PRAGMA", pattern: /\bPRAGMA\s+[a-z_]/ },
  { keyword: "ALTER", pattern: /\b(?:ALTER|DROP)\s+(?:TABLE|INDEX|TRIGGER|VIEW)\b/ },
  { keyword: "VACUUM", pattern: /^\s*VACUUM(?:\s+INTO\s+\S+)?\s*;?\s*$/ },
];

/** How a file reaches another: `import`, `import type`, `import()`, or `new URL("./x.js", …)` for a worker thread. */
export type ImportKind = "static" | "type" | "dynamic" | "worker";
/** One relative import, both paths relative to the source folder, the target with its `.ts` name. */
export interface FileImport { from: string; to: string; kind: ImportKind; line: number }
/**
 * One use of SQLite: `node-sqlite` imports or requires the module, `connection` constructs a connection class,
 * `opening` calls a function of the backend that opens one, `sql` is a string literal holding a statement.
 */
export interface SqliteUse { file: string; line: number; kind: "node-sqlite" | "connection" | "opening" | "sql"; what: string }
/** What one source file says about the architecture; `path` is relative to the source folder. */
export interface SourceFile { path: string; lines: number; imports: FileImport[]; sqlite: SqliteUse[]; sql: SqliteUse[] }

/** Every .ts file under `folder` (declarations excluded), sorted, as absolute paths. */
function typescriptFiles(folder: string): string[] {
  return readdirSync(folder).sort().flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return typescriptFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Lines as `wc -l` counts them. */
function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

/** The text of a string or template literal, with `${…}` as `?`, or null for any other node. */
function literalText(node: ts.Node): string | null {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((span) => `?${span.literal.text}`).join("");
  return null;
}

function firstArgumentText(call: ts.CallExpression | ts.NewExpression): string | null {
  const first = call.arguments?.[0];
  return first ? literalText(first) : null;
}

/** Reads one file under `source`: its relative imports (resolved to .ts paths), its uses of SQLite, its SQL literals. */
function readSourceFile(path: string, source: string): SourceFile {
  const text = readFileSync(path, "utf8");
  const tree = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const file: SourceFile = { path: relative(source, path), lines: lineCount(text), imports: [], sqlite: [], sql: [] };
  const lineOf = (node: ts.Node) => tree.getLineAndCharacterOfPosition(node.getStart(tree)).line + 1;
  const useOf = (node: ts.Node, kind: SqliteUse["kind"], what: string): SqliteUse => ({ file: file.path, line: lineOf(node), kind, what });
  const addImport = (specifier: string, kind: ImportKind, node: ts.Node) => {
    if (specifier === "node:sqlite") file.sqlite.push(useOf(node, "node-sqlite", `imports node:sqlite (${kind})`));
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) return;
    const target = resolve(dirname(path), specifier.replace(/\.js$/, ".ts"));
    file.imports.push({ from: file.path, to: relative(source, target), kind, line: lineOf(node) });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      addImport(node.moduleSpecifier.text, node.importClause?.isTypeOnly ? "type" : "static", node);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      addImport(node.moduleSpecifier.text, node.isTypeOnly ? "type" : "static", node);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const specifier = firstArgumentText(node);
      if (callee.kind === ts.SyntaxKind.ImportKeyword && specifier) addImport(specifier, "dynamic", node);
      else if (ts.isIdentifier(callee) && callee.text === "require" && specifier) addImport(specifier, "static", node);
      else if (ts.isIdentifier(callee) && OPENING_FUNCTIONS.has(callee.text)) {
        file.sqlite.push(useOf(node, "opening", `calls ${callee.text}()`));
      }
    } else if (ts.isNewExpression(node)) {
      const name = ts.isIdentifier(node.expression) ? node.expression.text
        : ts.isPropertyAccessExpression(node.expression) ? node.expression.name.text : "";
      const specifier = firstArgumentText(node);
      if (CONNECTION_CLASSES.has(name)) file.sqlite.push(useOf(node, "connection", `new ${name}()`));
      if (name === "URL" && specifier?.startsWith(".") && /\.(ts|js)$/.test(specifier)) addImport(specifier, "worker", node);
    }
    const literal = literalText(node);
    if (literal !== null) {
      if (/require\(\s*["']node:sqlite["']\s*\)/.test(literal)) {
        file.sqlite.push(useOf(node, "node-sqlite", "requires node:sqlite in worker source"));
      }
      for (const { keyword, pattern } of SQL_STATEMENTS) {
        if (pattern.test(literal)) file.sql.push(useOf(node, "sql", keyword));
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return file;
}

/** Reads every source file under `source` (an absolute folder), paths relative to it. */
export function readSourceFiles(source: string): SourceFile[] {
  return typescriptFiles(source).map((path) => readSourceFile(path, source));
}

/** A file's folder as a graph node: its first `depth` folders below the source folder, or the file itself at the top. */
export function folderOf(path: string, depth = 1): string {
  const parts = path.split("/");
  if (parts.length === 1) return path;
  return parts.slice(0, Math.min(depth, parts.length - 1)).join("/");
}

/** Tarjan's strongly connected components; returns those with more than one node, largest first, each sorted. */
export function stronglyConnected(nodes: readonly string[], edges: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const lowest = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    lowest.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of edges.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        lowest.set(node, Math.min(lowest.get(node)!, lowest.get(next)!));
      } else if (onStack.has(next)) lowest.set(node, Math.min(lowest.get(node)!, index.get(next)!));
    }
    if (lowest.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) components.push(component.sort());
  };
  for (const node of nodes) if (!index.has(node)) connect(node);
  return components.sort((a, b) => b.length - a.length);
}
