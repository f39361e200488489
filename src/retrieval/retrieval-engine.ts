/**
 * RetrievalEngine: the three recall operations over the stored history — describe an id, grep, and expand a
 * summary down the DAG. It knows nothing about agents, sessions or grants: callers resolve which conversations
 * may be read (RecallAccess) and check `locate`'s conversation before describing or expanding.
 */
import type { Clock, TokenEstimator } from "../contracts.js";
import { LcmError } from "../errors.js";
import { FILE_ID_PATTERN, SUMMARY_ID_PATTERN, type LargeFileRecord, type SummaryRecord } from "../records.js";
import type { LargeFileStore } from "../store/large-file-store.js";
import type { RetrievalStore, SummaryLineage } from "../store/retrieval-store.js";
import type { SummaryReadStore } from "../store/store.js";
import { describeFile, describeFileWithin, describeSummary, type Description, type FilePageRequest, readDescribedLineage } from "./describe.js";
import { DEFAULT_PAGE_BYTES, DEFAULT_PAGE_LINES, type FileContentReader } from "./file-content.js";
import type { FileSearchSource } from "../search/file-search.js";
import { grep, type GrepRequest, type GrepResult } from "../search/grep.js";
import { isoTime } from "../search/iso-time.js";
import { expandSummary, type ExpandRequest, type ExpandResult } from "./summary-expansion.js";
import type { ResultLimit } from "./window-share.js";

/** Retention archives a grep result names at most. */
const ARCHIVES_NAMED = 5;
/** How long one regex search may run before it stops and reports how far it got. */
export const DEFAULT_REGEX_BUDGET_MS = 3_000;

export type Located =
  | { kind: "summary"; conversationId: number; summary: SummaryRecord }
  | { kind: "file"; conversationId: number; file: LargeFileRecord };

/** Which page of a stored file `describe` shows: bytes (offset, maxBytes) or lines (startLine, maxLines). */
export interface FilePageOptions {
  offset?: number;
  maxBytes?: number;
  startLine?: number;
  maxLines?: number;
}

export interface RetrievalDeps {
  store: RetrievalStore;
  /** Summary and large-file reads of the main store. */
  records: Pick<SummaryReadStore, "getSummary" | "getSummariesByRowIds"> & Pick<LargeFileStore, "getLargeFile">;
  tokens: TokenEstimator;
  clock: Clock;
  /** Reads pages of stored large files. */
  files: FileContentReader;
  /** Searches inside stored large files (grep scope "files"). */
  fileSearch: FileSearchSource;
  regexBudgetMs?: number;
}

export class RetrievalEngine {
  constructor(private readonly deps: RetrievalDeps) {}

  /**
   * Finds a summary (`sum_…`) or stored file (`file_…`) by id; null when no such id is stored. Throws
   * LcmError("invalid_input") naming `parameter` when the id has neither shape.
   */
  async locate(id: string, parameter = "id"): Promise<Located | null> {
    const trimmed = id.trim();
    if (SUMMARY_ID_PATTERN.test(trimmed)) {
      const summary = await this.deps.records.getSummary(trimmed);
      return summary ? { kind: "summary", conversationId: summary.conversationId, summary } : this.archived(trimmed, parameter);
    }
    if (FILE_ID_PATTERN.test(trimmed)) {
      const file = await this.deps.records.getLargeFile(trimmed);
      return file ? { kind: "file", conversationId: file.conversationId, file } : this.archived(trimmed, parameter);
    }
    throw new LcmError(
      "invalid_input",
      `Parameter "${parameter}" must be a summary id (sum_ followed by 16 hex digits) or a file id (file_ followed by 16 hex digits), got ${JSON.stringify(id.slice(0, 80))}.`,
      { parameter },
    );
  }

  /**
   * An id retention archived with its whole conversation: throws LcmError("not_found") saying where it is (the
   * archive path, conversation and session), so a caller learns where to look instead of a bare "not found". Null
   * (not found) for an id never stored here.
   */
  private async archived(id: string, parameter: string): Promise<null> {
    const location = await this.deps.store.archivedIdLocation?.(id);
    if (!location) return null;
    throw new LcmError(
      "not_found",
      `${id} is no longer in the database: retention archived conversation ${location.conversationId} (agent ${location.agentId}, ` +
        `session ${location.sessionId}) on ${isoTime(location.archivedAt)} to ${location.archivePath} (gzip JSONL; ` +
        `\`lcm import jsonl\` restores it, after removing its first line). Answer from the summaries still in context.`,
      { parameter, archivePath: location.archivePath, conversationId: location.conversationId },
    );
  }

  /**
   * Describes what `locate` found. Files show one page of content: by lines when `startLine` or `maxLines` is
   * given, else by bytes from `offset`. Callers reject a request that mixes the two. With a `limit` (the reader's
   * model window, or a number of characters), the page fits it (describe.ts describeFileWithin). A summary shows
   * `lineage` when given (`describedLineage`), else its lineage read here.
   */
  async describe(located: Located, page: FilePageOptions = {}, limit: ResultLimit | null = null, lineage: SummaryLineage | null = null): Promise<Description> {
    if (located.kind === "summary") return describeSummary(this.deps.store, located.summary, lineage);
    const byLines = page.startLine !== undefined || page.maxLines !== undefined;
    const request: FilePageRequest = byLines
      ? { unit: "lines", startLine: page.startLine ?? 1, maxLines: page.maxLines ?? DEFAULT_PAGE_LINES }
      : { unit: "bytes", offset: page.offset ?? 0, maxBytes: page.maxBytes ?? DEFAULT_PAGE_BYTES };
    return limit === null
      ? describeFile(located.file, this.deps.files, request)
      : describeFileWithin(located.file, this.deps.files, request, limit);
  }

  /**
   * The lineage `describe` shows for the summary with this id, read by the id alone so that it can be read while the
   * id is located (null for a file's id or an unknown one). What it reads is shown only once `describe` is called.
   */
  describedLineage(id: string): Promise<SummaryLineage | null> {
    const trimmed = id.trim();
    return SUMMARY_ID_PATTERN.test(trimmed) ? readDescribedLineage(this.deps.store, trimmed) : Promise.resolve(null);
  }

  async grep(request: GrepRequest): Promise<GrepResult> {
    // The archives are read while the search runs (on a server's backend, a round trip saved); handled here too, so a
    // search that fails first leaves no unhandled rejection behind.
    const archived = request.conversationIds.length > 0 ? this.deps.store.archivesOf?.(request.conversationIds, ARCHIVES_NAMED) : undefined;
    archived?.catch(() => undefined);
    const result = await grep(this.deps.store, request, {
      now: this.deps.clock.now(),
      regexBudgetMs: this.deps.regexBudgetMs ?? DEFAULT_REGEX_BUDGET_MS,
      files: this.deps.fileSearch,
    });
    const archives = (await archived) ?? [];
    if (archives.length === 0) return result;
    // Archived text is not searched: say where it is, so "no match" is never taken for "never said".
    const named = archives.map((archive) => archive.kind === "messages"
      ? `${archive.archivePath} (messages seq ${archive.seqStart}-${archive.seqEnd} of conversation ${archive.conversationId})`
      : `${archive.archivePath} (conversation ${archive.conversationId}, session ${archive.sessionId})`);
    const note = `Retention archived older history out of the database; it is not searched here: ${named.join("; ")}${archives.length === ARCHIVES_NAMED ? "; and more (lcm retention lists them)" : ""}. Search an archive with zgrep.`;
    return { ...result, note: result.note ? `${result.note} ${note}` : note };
  }

  expand(summary: SummaryRecord, request: ExpandRequest): Promise<ExpandResult> {
    const { store, records } = this.deps;
    const source = {
      summaryLineage: store.summaryLineage.bind(store),
      getMessageTexts: store.getMessageTexts.bind(store),
      getSummariesByRowIds: records.getSummariesByRowIds.bind(records),
    };
    return expandSummary(source, this.deps.tokens, summary, request);
  }
}
