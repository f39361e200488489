/**
 * What the inspector page shows, as a URL query (`?tab=dag&c=3&node=sum_…`), and the API reads that view needs.
 * Shared by the page (web/inspector, bundled) and the server: in the Control UI tab the page cannot read the API by
 * script (OpenClaw renders the route in a frame sandboxed with `allow-scripts` alone, an opaque origin, from which
 * every read is cross-origin), so each view is a GET navigation and the server puts the answers of `readsFor` into
 * the page it returns. Standalone, the page reads the same paths from the API and keeps the query as a deep link.
 * No DOM and no Node here: both sides import it.
 */
export const TABS = ["dag", "context", "search", "files", "repairs"] as const;
export type Tab = (typeof TABS)[number];
export const SEARCH_MODES = ["full_text", "regex"] as const;
export const SEARCH_SCOPES = ["both", "summaries", "messages", "files"] as const;

export interface InspectorView {
  tab: Tab;
  /** The conversation selected; null: the first one listed. */
  conversationId: number | null;
  /** The summary open in the node panel. */
  summaryId: string | null;
  /** The stored file open in the files view. */
  fileId: string | null;
  /** The search run in the search view (empty: none). */
  query: string;
  mode: (typeof SEARCH_MODES)[number];
  scope: (typeof SEARCH_SCOPES)[number];
}

export const DEFAULT_VIEW: InspectorView = {
  tab: "dag", conversationId: null, summaryId: null, fileId: null, query: "", mode: "full_text", scope: "both",
};

const oneOf = <T extends string>(values: readonly T[], value: string | null, fallback: T): T =>
  values.find((candidate) => candidate === value) ?? fallback;

/** The view a query names; what is missing or malformed takes its default (a bad link still opens the inspector). */
export function viewFromQuery(query: URLSearchParams): InspectorView {
  const conversation = Number(query.get("c"));
  const identifier = (name: string) => {
    const value = query.get(name);
    return value !== null && /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : null;
  };
  return {
    tab: oneOf(TABS, query.get("tab"), DEFAULT_VIEW.tab),
    conversationId: Number.isSafeInteger(conversation) && conversation > 0 ? conversation : null,
    summaryId: identifier("node"),
    fileId: identifier("file"),
    query: (query.get("q") ?? "").slice(0, 2_000),
    mode: oneOf(SEARCH_MODES, query.get("mode"), DEFAULT_VIEW.mode),
    scope: oneOf(SEARCH_SCOPES, query.get("scope"), DEFAULT_VIEW.scope),
  };
}

/** The query of a view, defaults left out (so `?` alone is the inspector's first page). */
export function queryOfView(view: InspectorView): string {
  const query = new URLSearchParams();
  if (view.tab !== DEFAULT_VIEW.tab) query.set("tab", view.tab);
  if (view.conversationId !== null) query.set("c", String(view.conversationId));
  if (view.summaryId !== null) query.set("node", view.summaryId);
  if (view.fileId !== null) query.set("file", view.fileId);
  if (view.query !== "") query.set("q", view.query);
  if (view.mode !== DEFAULT_VIEW.mode) query.set("mode", view.mode);
  if (view.scope !== DEFAULT_VIEW.scope) query.set("scope", view.scope);
  return query.toString();
}

/** The API path of a search, as the page asks for it. */
export function searchPath(query: string, mode: string, scope: string): string {
  return `search?${new URLSearchParams({ q: query, mode, scope })}`;
}

/**
 * The API reads (paths below `api/`) the page makes to show `view`, once the overview has named the conversation
 * shown (`conversationId`: the view's, else the first listed; null when there is none).
 */
export function readsFor(view: InspectorView, conversationId: number | null): string[] {
  const reads: string[] = [];
  if (conversationId !== null) {
    reads.push(`conversations/${conversationId}/dag`);
    if (view.summaryId !== null) reads.push(`summaries/${view.summaryId}`);
    if (view.tab === "context") reads.push(`conversations/${conversationId}/context`);
    if (view.tab === "files") reads.push(`conversations/${conversationId}/files`);
  }
  if (view.tab === "files" && view.fileId !== null) reads.push(`files/${view.fileId}`);
  if (view.tab === "search" && view.query.trim() !== "") reads.push(searchPath(view.query, view.mode, view.scope));
  if (view.tab === "repairs") reads.push(conversationId === null ? "repairs" : `repairs?conversation=${conversationId}`);
  return reads;
}
