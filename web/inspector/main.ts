/**
 * The inspector page: conversations by agent with their health, and for the one selected its summary DAG (a graph),
 * what the model sees next, search with hits linked into the DAG and the stored files, the stored files, and the
 * repairs. Everything comes from the JSON API beside the page (relative URLs). Repairs are previewed side by side and
 * applied only in write mode. What is shown is the page's query (inspector-view.ts): a link opens the same view.
 *
 * Two ways in. Standalone (`lcm inspect`) the page reads the API and changes views in place. In OpenClaw's Control UI
 * tab the page cannot read anything by script (a frame sandboxed with `allow-scripts` alone: an opaque origin), so
 * the server puts the answers of the view into the page, and every click that needs other data navigates the frame
 * to that view's query instead.
 */
import type { Core } from "cytoscape";
import { DEFAULT_VIEW, type InspectorView, queryOfView, searchPath, type Tab, viewFromQuery } from "../../src/inspector/inspector-view.js";
import { type Dag, drawDag, focusNode, WRITERS } from "./dag-view.js";

interface State {
  overview: any;
  conversationId: number | null;
  cy: Core | null;
  dag: (Dag & { conversationId: number }) | null;
  readOnly: boolean;
  view: InspectorView;
  /** The API answers put into the page (the Control UI tab); null: the page reads the API. */
  inline: Map<string, { status: number; body: any }> | null;
}

const state: State = { overview: null, conversationId: null, cy: null, dag: null, readOnly: true, view: DEFAULT_VIEW, inline: inlineAnswers() };
(window as unknown as { lcmInspector: State }).lcmInspector = state;

function inlineAnswers(): State["inline"] {
  const element = document.getElementById("lcm-page-data");
  if (!element) return null;
  return new Map(Object.entries(JSON.parse(element.textContent ?? "{}").answers ?? {}));
}

/**
 * Shows another view. In place when the page reads the API (`inPlace`, the query kept as a deep link); in the
 * Control UI tab by navigating the frame to the view's query (the server answers with the view and its data).
 */
function go(update: Partial<InspectorView>, inPlace: () => Promise<void>): void {
  if (state.inline) {
    location.search = queryOfView({ ...state.view, ...update });
    return;
  }
  inPlace().catch(showError);
}

/** Records what is shown, in the page's query (standalone: the page does not reload). */
function remember(update: Partial<InspectorView>): void {
  state.view = { ...state.view, ...update };
  if (state.inline) return;
  const query = queryOfView(state.view);
  history.replaceState(null, "", query === "" ? location.pathname : `?${query}`);
}

function showError(error: unknown): void {
  document.body.prepend(el("p", { class: "error", text: `The inspector could not load: ${(error as Error).message}` }));
}

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

/** An element with text (never HTML from the database) and children. */
function el(tag: string, props: Record<string, string> = {}, ...children: (Node | string | null)[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "text") element.textContent = value;
    else element.setAttribute(key, value);
  }
  for (const child of children) if (child !== null) element.append(child);
  return element;
}

function button(label: string, onClick: () => void, className = ""): HTMLElement {
  const element = el("button", { type: "button", text: label, ...(className ? { class: className } : {}) });
  element.addEventListener("click", onClick);
  return element;
}

async function api<T = any>(path: string, body?: unknown): Promise<T> {
  if (state.inline) {
    if (body !== undefined) throw new Error("The Control UI tab is read-only: repairs run from `openclaw lcm repair` or `lcm inspect --write`.");
    const answer = state.inline.get(path);
    if (!answer) throw new Error(`This page holds no answer for ${path}: open the view again.`);
    if (answer.status !== 200) throw new Error(answer.body?.error ?? `HTTP ${answer.status}`);
    return answer.body as T;
  }
  const response = await fetch(`api/${path}`, body === undefined
    ? { credentials: "same-origin" }
    : { method: "POST", credentials: "same-origin", headers: { "content-type": "application/json", "x-lcm-inspector": "1" }, body: JSON.stringify(body) });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error ?? `HTTP ${response.status}`);
  return data as T;
}

const tokens = (value: number) => `${value.toLocaleString("en-US")} tokens`;
const when = (millis: number) => new Date(millis).toISOString().replace("T", " ").slice(0, 16);

async function loadOverview(): Promise<void> {
  const overview = await api("overview");
  state.overview = overview;
  state.readOnly = overview.readOnly;
  byId("database").textContent = overview.databasePath;
  const mode = byId("mode");
  mode.textContent = overview.readOnly ? `read-only${overview.readOnlyReason ? ` (${overview.readOnlyReason})` : ""}` : "write: repairs allowed";
  mode.className = overview.readOnly ? "badge" : "badge write";
  byId("backlog").textContent = overview.indexBacklog > 0 ? `index backlog: ${overview.indexBacklog} messages` : "index up to date";
  const nav = byId("conversations");
  nav.replaceChildren();
  for (const agent of overview.agents as string[]) {
    nav.append(el("h2", { text: `agent ${agent}` }));
    for (const conversation of overview.conversations.filter((item: any) => item.agentId === agent)) {
      const { health } = conversation;
      const flags = [
        health.fallbackSummaries > 0 ? `${health.fallbackSummaries} fallback` : null,
        health.recentIntegrityFindings > 0 ? `${health.recentIntegrityFindings} integrity findings` : null,
        health.spendGuard.capped ? "spend guard capped" : null,
      ].filter(Boolean).join(" · ");
      const item = el("button", { class: "conversation", "data-conversation": String(conversation.conversationId) },
        el("strong", { text: `#${conversation.conversationId} ${conversation.sessionKey ?? ""}` }),
        el("div", { class: "meta", text: `${conversation.messages} messages · ${tokens(conversation.tokens)} · ${conversation.summaries} summaries · last ${when(conversation.lastActivityAt)}` }),
        el("div", { class: `health ${flags ? "warn" : ""}`, text: flags || `healthy · spend ${health.spendGuard.calls}/${health.spendGuard.maxCalls}` }),
      );
      const conversationId = conversation.conversationId as number;
      item.addEventListener("click", () => go({ conversationId, summaryId: null, fileId: null }, () => selectConversation(conversationId)));
      nav.append(item);
    }
  }
}

async function selectConversation(conversationId: number, focus?: string): Promise<void> {
  state.conversationId = conversationId;
  remember({ conversationId, summaryId: focus ?? null });
  for (const item of document.querySelectorAll(".conversation")) {
    item.classList.toggle("selected", item.getAttribute("data-conversation") === String(conversationId));
  }
  const dag = await api(`conversations/${conversationId}/dag`);
  state.dag = dag;
  state.cy?.destroy();
  const container = byId("dag");
  container.setAttribute("data-node-count", String(dag.nodes.length));
  byId("dag-title").textContent = `conversation ${conversationId}: ${dag.nodes.length} summaries over ${dag.messageCount} messages` +
    (dag.rangesOmitted ? " (message ranges in each node's panel)" : "");
  state.cy = dag.nodes.length > 0 ? drawDag(container, dag, openNode) : null;
  if (!state.cy) container.replaceChildren(el("p", { class: "hint", text: "No summaries yet: nothing was compacted." }));
  if (focus) await showNode(focus);
  const active = document.querySelector("#tabs [aria-selected='true']")?.getAttribute("data-tab");
  if (active === "context") await showContext();
  if (active === "files") await showFiles();
}

/** A click on a node or a lineage link. */
function openNode(summaryId: string): void {
  go({ summaryId }, () => showNode(summaryId));
}

async function showNode(summaryId: string): Promise<void> {
  remember({ summaryId });
  if (state.cy) focusNode(state.cy, summaryId);
  const panel = byId("node-panel");
  const node = await api(`summaries/${summaryId}`);
  const lineage = (label: string, ids: string[]) => ids.length === 0 ? null : el("div", {},
    el("strong", { text: `${label}: ` }), ...ids.flatMap((id) => [button(id, () => openNode(id), "link"), " "]));
  panel.replaceChildren(...present(
    el("h3", { text: node.summaryId }),
    el("div", { class: "small", text: `${node.kind} · depth ${node.depth} · ${node.level}${node.writtenBy ? ` · written by ${node.writtenBy}` : ""} · ${node.inContext ? "in context" : "condensed into another"}` }),
    el("div", { class: "small", text: `${tokens(node.tokenCount)} from ${tokens(node.sourceTokenCount)} · seq ${node.seqStart}–${node.seqEnd} (${node.sourceMessageCount} messages) · ${node.earliestAt} → ${node.latestAt}` }),
    el("div", { class: "text", id: "node-content", text: node.content }),
    lineage("parents (what it condensed)", node.parentSummaryIds),
    lineage("children (what condensed it)", node.childSummaryIds),
    repairActions(node),
    el("div", { id: "repair-area" }),
    node.sourceMessages.length === 0 ? null : el("div", {},
      el("strong", { text: `source messages (${node.sourceMessagesShown} of ${node.sourceMessageIds.length})` }),
      ...node.sourceMessages.map((message: any) => el("div", { class: "text", text: `#${message.seq} ${message.role} · ${message.tokens} tokens\n${message.text}` }))),
  ));
}

function present(...items: (HTMLElement | null)[]): HTMLElement[] {
  return items.filter((item): item is HTMLElement => item !== null);
}

function repairActions(node: any): HTMLElement | null {
  if (state.readOnly) return el("p", { class: "hint", text: "Read-only: repairs need `lcm inspect --write` or `lcm repair`." });
  const actions = el("div", { class: "actions" },
    button("Re-summarize with the model", () => void propose({ kind: "resummarize", summaryId: node.summaryId })),
    button("Rewrite by hand", () => rewriteForm(node)),
    node.kind === "condensed" && node.inContext ? button("Dissolve into parents", () => void propose({ kind: "dissolve", summaryId: node.summaryId })) : null,
  );
  return actions;
}

function rewriteForm(node: any): void {
  const area = byId("repair-area");
  const input = el("textarea", { id: "rewrite-text", rows: "8", style: "width:100%" }) as HTMLTextAreaElement;
  input.value = node.content;
  area.replaceChildren(input, button("Preview", () => void propose({ kind: "rewrite", summaryId: node.summaryId, content: input.value })));
}

async function propose(request: Record<string, string>): Promise<void> {
  const area = byId("repair-area");
  area.replaceChildren(el("p", { class: "hint", text: "Preparing the preview…" }));
  try {
    const { proposalId, proposal } = await api("repairs/propose", request);
    const column = (title: string, text: string) => el("div", {}, el("h4", { text: title }), el("div", { class: "text", text }));
    const comparison = proposal.kind === "dissolve"
      ? el("div", { class: "side-by-side", id: "repair-preview" },
        column(`now: ${proposal.summaryId} · ${tokens(proposal.contextTokens.before)} in context`, proposal.old.content),
        column(`after: its ${proposal.parents.length} parents · ${tokens(proposal.contextTokens.after)}`,
          proposal.parents.map((parent: any) => `${parent.summaryId}\n${parent.content}`).join("\n\n")))
      : el("div", { class: "side-by-side", id: "repair-preview" },
        column(`now · ${proposal.old.level} · ${tokens(proposal.old.tokenCount)}`, proposal.old.content),
        column(`new · ${proposal.new.level} · ${tokens(proposal.new.tokenCount)}${proposal.summarizer ? ` · ${proposal.summarizer}` : ""}`, proposal.new.content));
    area.replaceChildren(comparison, button("Apply", () => void apply(proposalId, proposal.summaryId)), button("Cancel", () => area.replaceChildren()));
  } catch (error) {
    area.replaceChildren(el("p", { class: "error", text: (error as Error).message }));
  }
}

async function apply(proposalId: string, summaryId: string): Promise<void> {
  const area = byId("repair-area");
  try {
    const { outcome } = await api(`repairs/${proposalId}/apply`, {});
    await loadOverview();
    await selectConversation(outcome.conversationId, summaryId);
    byId("repair-area").replaceChildren(
      el("p", { id: "repair-done", text: `Applied as repair ${outcome.repairId} (integrity findings: ${outcome.findings.before} before, ${outcome.findings.after} after).` }),
      button("Undo", () => void undo(outcome.repairId, outcome.conversationId, summaryId)));
  } catch (error) {
    area.replaceChildren(el("p", { class: "error", text: (error as Error).message }));
  }
}

async function undo(repairId: number, conversationId: number, summaryId: string): Promise<void> {
  await api(`repairs/${repairId}/undo`, {});
  await loadOverview();
  await selectConversation(conversationId, summaryId);
  byId("repair-area").replaceChildren(el("p", { id: "repair-undone", text: `Repair ${repairId} undone.` }));
}

async function showContext(): Promise<void> {
  const view = byId("view-context");
  if (state.conversationId === null) return void view.replaceChildren(el("p", { class: "hint", text: "Pick a conversation." }));
  const context = await api(`conversations/${state.conversationId}/context`);
  const { totals } = context;
  const budget = Math.max(1, context.windowTokens ?? context.budgetTokens);
  const part = (value: number, color: string, title: string) =>
    el("div", { style: `width:${(100 * value) / budget}%;background:${color}`, title: `${title}: ${tokens(value)}` });
  view.replaceChildren(
    el("p", {}, `Next turn: ${tokens(totals.estimatedTokens)} of a ${tokens(context.budgetTokens)} budget (${context.budgetSource})` +
      (context.hostTokens !== null ? ` · the host's own prompt, tools and reserve take ${tokens(context.hostTokens)} of the ${tokens(context.windowTokens)} window` : "") +
      ` · fresh tail: ${context.freshTail.rawMessagesInContext} raw messages (freshTailCount ${context.freshTail.configuredCount})`),
    el("div", { class: "budget", id: "budget-bar" },
      part(context.hostTokens ?? 0, "#c9ced8", "host prompt, tools and reserve"), part(context.systemPromptAdditionTokens, "#9aa5b8", "LCM's system prompt addition"),
      part(totals.summaryTokens, "#2f6fdf", "summaries"), part(totals.rawTokens, "#2a9d8f", "raw messages")),
    el("table", { id: "context-items" }, el("tr", {}, el("th", { text: "#" }), el("th", { text: "kind" }), el("th", { text: "tokens" }), el("th", { text: "text" })),
      ...context.items.map((item: any) => el("tr", {}, el("td", { text: String(item.index) }), el("td", { text: item.kind === "message" ? item.role : item.kind === "floor" ? "memory floor" : item.kind }),
        el("td", { text: String(item.tokens) }), el("td", {}, el("div", { class: "text", text: item.text.slice(0, 600) }))))),
  );
}

/**
 * Runs the search typed (the button, or Enter in the field). Not a form submission: in the Control UI tab's frame
 * (sandboxed without allow-forms) a form is never submitted and its submit event never fires.
 */
function submitSearch(event: Event): void {
  event.preventDefault();
  const search = {
    query: byId<HTMLInputElement>("search-input").value, mode: byId<HTMLSelectElement>("search-mode").value as InspectorView["mode"],
    scope: byId<HTMLSelectElement>("search-scope").value as InspectorView["scope"],
  };
  go({ tab: "search", ...search }, () => runSearch());
}

async function runSearch(): Promise<void> {
  const results = byId("search-results");
  const q = byId<HTMLInputElement>("search-input").value;
  const mode = byId<HTMLSelectElement>("search-mode").value;
  const scope = byId<HTMLSelectElement>("search-scope").value;
  remember({ tab: "search", query: q, mode: mode as InspectorView["mode"], scope: scope as InspectorView["scope"] });
  try {
    const result = await api(searchPath(q, mode, scope));
    results.replaceChildren(el("p", { class: "small", id: "search-count", text: `${result.matches.length} matches in ${result.searchedConversations} conversations${result.note ? ` · ${result.note}` : ""}` }),
      ...result.matches.map((match: any) => {
        const target = match.type === "summary" ? match.summaryId : match.type === "message" ? match.coveringSummaryId : null;
        const head = match.type === "file" ? `file ${match.fileId} line ${match.lineNumber}` : match.type === "summary"
          ? `summary ${match.summaryId} · conversation ${match.conversationId}` : `message seq ${match.seq} · ${match.role} · conversation ${match.conversationId}`;
        return el("div", { class: "hit" }, el("div", { class: "small", text: head }), el("div", { class: "text", text: match.snippet }),
          target ? button(`open ${target} in the DAG`, () => openInDag(match.conversationId, target), "link") : null,
          match.type === "file" || match.inFile ? button(`open the file`, () => openFile(match.fileId ?? match.inFile.fileId, match.conversationId), "link") : null);
      }));
  } catch (error) {
    results.replaceChildren(el("p", { class: "error", text: (error as Error).message }));
  }
}

function openInDag(conversationId: number, summaryId: string): void {
  go({ tab: "dag", conversationId, summaryId, fileId: null }, async () => {
    selectTab("dag");
    await selectConversation(conversationId, summaryId);
  });
}

async function showFiles(): Promise<void> {
  const view = byId("view-files");
  if (state.conversationId === null) return void view.replaceChildren(el("p", { class: "hint", text: "Pick a conversation." }));
  const { files } = await api(`conversations/${state.conversationId}/files`);
  view.replaceChildren(files.length === 0 ? el("p", { class: "hint", text: "No files stored aside in this conversation." }) : el("div", { id: "file-list" },
    ...files.map((file: any) => el("div", { class: "hit" },
      button(`${file.fileId} ${file.fileName ?? ""}`, () => openFile(file.fileId, state.conversationId!), "link"),
      el("div", { class: "small", text: `${file.mimeType ?? "?"} · ${file.byteSize} bytes · ${tokens(file.tokenCount)} · ${file.origin} · explored by ${file.explorer}` }),
      el("div", { class: "text", text: file.explorationSummary })))), el("div", { id: "file-content" }));
}

function openFile(fileId: string, conversationId: number): void {
  go({ tab: "files", conversationId, fileId }, async () => {
    if (state.conversationId !== conversationId) await selectConversation(conversationId);
    selectTab("files");
    await showFiles();
    await showFile(fileId);
  });
}

async function showFile(fileId: string): Promise<void> {
  remember({ fileId });
  const file = await api(`files/${fileId}`);
  byId("file-content").replaceChildren(el("h3", { text: `${file.fileId} ${file.fileName ?? ""}` }),
    el("div", { class: "text", text: file.content ? file.content.text ?? JSON.stringify(file.content) : file.contentNote ?? "(unreadable)" }));
}

async function showRepairs(): Promise<void> {
  const { repairs } = await api(`repairs${state.conversationId ? `?conversation=${state.conversationId}` : ""}`);
  byId("view-repairs").replaceChildren(repairs.length === 0 ? el("p", { class: "hint", text: "No repairs recorded." }) : el("table", {},
    ...repairs.map((repair: any) => el("tr", {}, el("td", { text: `#${repair.repairId}` }), el("td", { text: repair.kind }),
      el("td", {}, button(repair.summaryId, () => openInDag(repair.conversationId, repair.summaryId), "link")),
      el("td", { text: when(repair.createdAt) }), el("td", { text: repair.undoneAt ? `undone ${when(repair.undoneAt)}` : "" })))));
}

function selectTab(tab: Tab): void {
  remember({ tab });
  for (const element of document.querySelectorAll("#tabs button")) element.setAttribute("aria-selected", String(element.getAttribute("data-tab") === tab));
  for (const view of document.querySelectorAll<HTMLElement>(".view")) view.hidden = view.id !== `view-${tab}`;
  if (tab === "dag") state.cy?.resize();
}

function legend(): void {
  byId("legend").replaceChildren(...Object.values(WRITERS).map((writer) =>
    el("span", {}, el("i", { style: `background:${writer.color}` }), writer.label)), el("span", { text: "▢ condensed · ○ leaf · dark border: in context" }));
}

/** Shows a tab's view for the conversation selected (the DAG is drawn already; search runs on submit). */
async function showTab(tab: Tab): Promise<void> {
  selectTab(tab);
  if (tab === "context") await showContext();
  if (tab === "files") await showFiles();
  if (tab === "repairs") await showRepairs();
}

async function start(): Promise<void> {
  legend();
  for (const tab of document.querySelectorAll("#tabs button")) {
    const name = tab.getAttribute("data-tab") as Tab;
    // The search tab needs no data until a search is run: it opens in place in both ways in.
    tab.addEventListener("click", () => name === "search" ? void showTab(name) : go({ tab: name }, () => showTab(name)));
  }
  byId("search-form").addEventListener("submit", submitSearch); // standalone, Enter submits the form
  byId("search-run").addEventListener("click", submitSearch);
  byId("search-input").addEventListener("keydown", (event) => { if (event.key === "Enter") submitSearch(event); });
  byId("fit").addEventListener("click", () => state.cy?.fit(undefined, 20));
  // The view the query names, read in the order the server answered it (inspector-view.ts, readsFor).
  const view = viewFromQuery(new URLSearchParams(location.search));
  byId<HTMLInputElement>("search-input").value = view.query;
  byId<HTMLSelectElement>("search-mode").value = view.mode;
  byId<HTMLSelectElement>("search-scope").value = view.scope;
  await loadOverview();
  const conversationId = view.conversationId ?? state.overview.conversations[0]?.conversationId ?? null;
  selectTab(view.tab);
  if (conversationId !== null) await selectConversation(conversationId, view.summaryId ?? undefined);
  if (view.tab === "files" && view.fileId !== null) await showFile(view.fileId);
  if (view.tab === "search" && view.query.trim() !== "") await runSearch();
  if (view.tab === "repairs") await showRepairs();
  document.body.setAttribute("data-ready", "true");
}

start().catch(showError);
