/**
 * Search inside the stored large files of the conversations in scope (lcm_grep scope "files"). A regex passes
 * the same policy as message search before any file is opened; full text is matched as a literal phrase, case
 * folded. Lines go to the regex worker (regex-runner.ts) in batches under the search budget, so a pattern the
 * policy cannot see through is cut off instead of freezing the gateway. Newest files first, lines in order.
 */
import type { ConversationGrepResult, LargeFileReader, UnsearchedFile } from "../large-files/large-file-reader.js";
import { LcmError } from "../errors.js";
import type { ConversationId, FileId, LargeFileRecord } from "../records.js";
import { isoTime } from "./iso-time.js";
import { compileSearchRegex } from "./regex-policy.js";
import { RegexRunner } from "./regex-runner.js";
import { regexSnippet } from "./regex-snippet.js";

/** Files per conversation considered (newest kept); far above what a session stores. */
const MAX_FILES_PER_CONVERSATION = 10_000;
/** A hit's hint starts reading this many lines above it. */
const HINT_LINES_BEFORE = 10;

/** The reads file search needs from the large-file reader. */
export type FileSearchSource = Pick<LargeFileReader, "listFiles" | "grepFiles">;

export interface FileSearchRequest {
  pattern: string;
  mode: "regex" | "full_text";
  conversationIds: ConversationId[];
  since: number | null;
  before: number | null;
  limit: number;
  budgetMs: number;
}

export interface FileMatch {
  type: "file";
  id: FileId;
  fileId: FileId;
  fileName: string | null;
  conversationId: ConversationId;
  /** 1-based line and column (UTF-16 units) of the first match on the line. */
  lineNumber: number;
  column: number;
  /** When the file was stored. */
  createdAt: string;
  snippet: string;
  /** The lcm_describe call that reads the lines around the hit. */
  hint: string;
  /** Full text over everything stored: the query's terms this file's chunk holds, as typed. */
  matchedTerms?: string[];
}

export interface FileSearchResult {
  matches: FileMatch[];
  /** The search stopped before the end of the files in scope (time budget or a failed worker); see `note`. */
  truncated: boolean;
  /** Stored files in scope, and how many of them were opened. */
  filesInScope: number;
  searchedFiles: number;
  /** Files whose content is missing or could not be read or searched, with the reason. */
  unavailableFiles: UnsearchedFile[];
  note: string | null;
}

export async function searchFiles(source: FileSearchSource, request: FileSearchRequest): Promise<FileSearchResult> {
  const query = fileQuery(request);
  const files = await filesInScope(source, request);
  if (files.length === 0) {
    return { matches: [], truncated: false, filesInScope: 0, searchedFiles: 0, unavailableFiles: [], note: "No large files are stored in the searched conversations (for this time range)." };
  }
  const found = await source.grepFiles(files, { ...query, maxMatches: request.limit, deadlineMs: request.budgetMs }, {
    matcher: (regexSource, flags) => new RegexRunner(regexSource, flags),
  });
  const byId = new Map(files.map((file) => [file.fileId, file]));
  const matches = found.results.flatMap((result) => result.matches.map((match): FileMatch => {
    const file = byId.get(result.fileId)!;
    return {
      type: "file",
      id: file.fileId,
      fileId: file.fileId,
      fileName: file.fileName,
      conversationId: file.conversationId,
      lineNumber: match.lineNumber,
      column: match.column,
      createdAt: isoTime(file.createdAt),
      snippet: regexSnippet(match.text, match.textRange[0], match.textRange[1]),
      hint: `lcm_describe(id: ${file.fileId}, startLine: ${Math.max(1, match.lineNumber - HINT_LINES_BEFORE)})`,
    };
  }));
  return {
    matches,
    truncated: found.truncated === "deadline" || found.unavailable.some((file) => file.status === "search-failed"),
    filesInScope: files.length,
    searchedFiles: found.searchedFiles,
    unavailableFiles: found.unavailable,
    note: noteOf(found, files.length, request),
  };
}

/** Validates the pattern before any file is opened; throws LcmError("invalid_input") naming `pattern`. */
function fileQuery(request: FileSearchRequest): { pattern: string; mode: "regex" | "literal"; caseSensitive: false } {
  if (request.mode === "regex") {
    compileSearchRegex(request.pattern);
    return { pattern: request.pattern, mode: "regex", caseSensitive: false };
  }
  const phrase = request.pattern.trim().replace(/^"(.*)"$/s, "$1");
  if (phrase.trim() === "") {
    throw new LcmError("invalid_input", 'Parameter "pattern" is blank; give the words to find in the stored files.', { parameter: "pattern" });
  }
  return { pattern: phrase, mode: "literal", caseSensitive: false };
}

/** The conversations' files inside since/before, newest first. */
async function filesInScope(source: FileSearchSource, request: FileSearchRequest): Promise<LargeFileRecord[]> {
  const files: LargeFileRecord[] = [];
  for (const conversationId of request.conversationIds) {
    for (const file of await source.listFiles(conversationId, MAX_FILES_PER_CONVERSATION)) {
      if (request.since !== null && file.createdAt < request.since) continue;
      if (request.before !== null && file.createdAt >= request.before) continue;
      files.push(file);
    }
  }
  return files.sort((left, right) => right.createdAt - left.createdAt || (left.fileId < right.fileId ? -1 : 1));
}

function noteOf(found: ConversationGrepResult, filesInScope: number, request: FileSearchRequest): string | null {
  const notes: string[] = [];
  if (found.truncated === "deadline") {
    notes.push(
      `Stopped early: the ${request.budgetMs} ms search budget ran out in file ${found.searchedFiles} of ${filesInScope} ` +
        "(newest first), so older files were not searched. Make the pattern more specific, or narrow with since/before or conversationId.",
    );
  } else if (found.truncated === "max-matches") {
    notes.push(`Stopped at limit (${request.limit} matches); more exist. Raise limit or make the pattern more specific.`);
  }
  if (found.unavailable.length > 0) {
    const files = found.unavailable.length === 1 ? "1 stored file" : `${found.unavailable.length} stored files`;
    notes.push(`${files} could not be searched; see unavailableFiles.`);
  }
  if (request.mode === "full_text") notes.push("In files, full_text matches the words as one literal phrase, ignoring case.");
  return notes.length > 0 ? notes.join(" ") : null;
}
