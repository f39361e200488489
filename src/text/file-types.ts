/**
 * What kind of content a large file holds, decided from its name, its mime type and (for unnamed tool output)
 * a look at the text itself. The kind picks the explorer; the extension names the stored file. Extensions are
 * reduced to lower-case letters and digits, so no file name can steer where content is written.
 */

export type StructuredFormat = "json" | "jsonl" | "csv" | "tsv" | "yaml" | "xml";
export type CodeLanguage = "typescript" | "javascript" | "python" | "go" | "rust" | "java" | "c" | "cpp";

export type ContentKind =
  | { kind: "structured"; format: StructuredFormat }
  | { kind: "code"; language: CodeLanguage }
  | { kind: "text" };

const EXTENSION_KINDS: Record<string, ContentKind> = {
  json: structured("json"), jsonl: structured("jsonl"), ndjson: structured("jsonl"),
  csv: structured("csv"), tsv: structured("tsv"), tab: structured("tsv"),
  yaml: structured("yaml"), yml: structured("yaml"), xml: structured("xml"), xsd: structured("xml"),
  ts: code("typescript"), tsx: code("typescript"), mts: code("typescript"), cts: code("typescript"),
  js: code("javascript"), jsx: code("javascript"), mjs: code("javascript"), cjs: code("javascript"),
  py: code("python"), pyi: code("python"), go: code("go"), rs: code("rust"), java: code("java"),
  c: code("c"), h: code("c"), cc: code("cpp"), cpp: code("cpp"), cxx: code("cpp"), hpp: code("cpp"),
  hh: code("cpp"), hxx: code("cpp"),
};

const MIME_KINDS: Record<string, ContentKind> = {
  "application/json": structured("json"), "text/json": structured("json"),
  "application/x-ndjson": structured("jsonl"), "application/ndjson": structured("jsonl"),
  "application/jsonl": structured("jsonl"), "application/x-jsonlines": structured("jsonl"),
  "text/csv": structured("csv"), "application/csv": structured("csv"), "text/tab-separated-values": structured("tsv"),
  "application/yaml": structured("yaml"), "application/x-yaml": structured("yaml"), "text/yaml": structured("yaml"),
  "text/x-yaml": structured("yaml"), "application/xml": structured("xml"), "text/xml": structured("xml"),
  "application/typescript": code("typescript"), "text/typescript": code("typescript"), "text/x-typescript": code("typescript"),
  "application/javascript": code("javascript"), "text/javascript": code("javascript"),
  "text/x-python": code("python"), "application/x-python": code("python"), "text/x-go": code("go"),
  "text/x-rust": code("rust"), "text/x-java": code("java"), "text/x-java-source": code("java"),
  "text/x-c": code("c"), "text/x-csrc": code("c"), "text/x-chdr": code("c"), "text/x-c++": code("cpp"),
  "text/x-c++src": code("cpp"), "text/x-c++hdr": code("cpp"),
};

const MIME_EXTENSIONS: Record<string, string> = {
  "application/json": "json", "text/json": "json", "application/x-ndjson": "jsonl", "application/ndjson": "jsonl",
  "application/jsonl": "jsonl", "text/csv": "csv", "text/tab-separated-values": "tsv", "application/yaml": "yaml",
  "application/x-yaml": "yaml", "text/yaml": "yaml", "application/xml": "xml", "text/xml": "xml",
  "text/markdown": "md", "text/html": "html", "text/plain": "txt", "application/typescript": "ts",
  "application/javascript": "js", "text/javascript": "js", "text/x-python": "py", "text/x-go": "go",
  "text/x-rust": "rs", "text/x-java": "java", "text/x-c": "c", "text/x-c++": "cpp",
};

/** Formats whose text reached us extracted from a binary document: stored as what it now is, text. */
const EXTRACTED_TEXT_EXTENSIONS = new Set(["pdf", "doc", "docx", "odt", "rtf", "epub", "pptx", "ppt", "xlsx", "xls", "pages"]);

const EXTENSION_PATTERN = /\.([A-Za-z0-9]{1,10})$/;

/** The lower-case extension of a file name (letters and digits only), or null. */
export function extensionOfName(fileName: string | null): string | null {
  if (!fileName) return null;
  const base = fileName.split(/[\\/]/).pop() ?? "";
  return EXTENSION_PATTERN.exec(base)?.[1]?.toLowerCase() ?? null;
}

/** The extension of the stored file: from the name, else the mime type, else `txt`. Always [a-z0-9]{1,10}. */
export function storedExtension(fileName: string | null, mimeType: string | null): string {
  const fromName = extensionOfName(fileName);
  if (fromName) return EXTRACTED_TEXT_EXTENSIONS.has(fromName) ? "txt" : fromName;
  const fromMime = mimeType ? MIME_EXTENSIONS[baseMime(mimeType)] : undefined;
  return fromMime ?? "txt";
}

/**
 * The explorer of a stored file whose content is not text (an image or other bytes lossless-claw kept): stored byte
 * for byte and exported as it is, but never paged or searched as text.
 */
export const BINARY_EXPLORER = "binary";

export function isBinaryFile(file: { explorer: string }): boolean {
  return file.explorer === BINARY_EXPLORER;
}

/** The extension of a stored binary file: from the name, else the mime type's subtype (image/png → png), else `bin`. */
export function storedBinaryExtension(fileName: string | null, mimeType: string | null): string {
  const fromName = extensionOfName(fileName);
  if (fromName) return fromName;
  const subtype = mimeType ? baseMime(mimeType).split("/")[1]?.replace(/^x-/, "").replace(/[^a-z0-9]/g, "").slice(0, 10) : "";
  return subtype || "bin";
}

/** The mime type shown in the reference: the given one, else one implied by the name or the content. */
export function effectiveMimeType(fileName: string | null, mimeType: string | null, kind: ContentKind): string {
  if (mimeType) return mimeType;
  const extension = extensionOfName(fileName);
  const fromExtension = Object.entries(MIME_EXTENSIONS).find(([, value]) => value === extension)?.[0];
  if (fromExtension) return fromExtension;
  if (kind.kind === "structured") return Object.entries(MIME_EXTENSIONS).find(([, value]) => value === kind.format)?.[0] ?? "text/plain";
  return "text/plain";
}

/** The kind of content: by extension first (mime types of code are often just text/plain), then mime, then a sniff. */
export function classifyContent(fileName: string | null, mimeType: string | null, content: string): ContentKind {
  const extension = extensionOfName(fileName);
  const byExtension = extension ? EXTENSION_KINDS[extension] : undefined;
  if (byExtension) return byExtension;
  const mime = mimeType ? baseMime(mimeType) : "";
  const byMime = MIME_KINDS[mime] ?? (mime.endsWith("+json") ? structured("json") : mime.endsWith("+xml") ? structured("xml") : undefined);
  if (byMime) return byMime;
  return sniff(content);
}

/** Recognizes JSON, JSON Lines and XML by their first characters; everything else is text. */
function sniff(content: string): ContentKind {
  const head = content.slice(0, 4_096).trimStart();
  if (head.startsWith("<?xml")) return structured("xml");
  if (head.startsWith("{") || head.startsWith("[")) {
    const trimmed = content.trim();
    if (trimmed.endsWith("}") || trimmed.endsWith("]")) {
      try {
        JSON.parse(trimmed);
        return structured("json");
      } catch {
        // Not one document; JSON Lines is checked next.
      }
    }
    const lines = head.split("\n").slice(0, 6).filter((line) => line.trim() !== "");
    const complete = lines.length > 1 ? lines.slice(0, -1) : lines; // the last line of the head may be cut off
    if (complete.length > 0 && complete.every(isJsonObjectLine)) return structured("jsonl");
  }
  return { kind: "text" };
}

function isJsonObjectLine(line: string): boolean {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return false;
  try {
    JSON.parse(trimmed);
    return true;
  } catch {
    return false;
  }
}

function baseMime(mimeType: string): string {
  return mimeType.split(";")[0]!.trim().toLowerCase();
}

function structured(format: StructuredFormat): ContentKind {
  return { kind: "structured", format };
}

function code(language: CodeLanguage): ContentKind {
  return { kind: "code", language };
}
