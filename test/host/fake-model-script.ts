/**
 * What the fake model answers, decided purely from the request. Tests script the model with markers written
 * into the user messages they send (build them with the helpers below):
 * - `[[call:<tool> <json args>]]` (one or more): the model calls each tool in order, one per response, then
 *   answers in text;
 * - `[[reply:<text>]]`: the model answers exactly <text> (this also scripts a sub-agent, whose task text carries
 *   the marker when a tool passes the parent's question on);
 * - `[[overflow-once:<id>]]`: the first agent request carrying it fails with a 400 context_length_exceeded.
 * Only the current turn's user messages are read (OpenClaw adds a runtime-context user message beside the
 * prompt, and history keeps old markers). Summarization requests get a recognizable summary that contains none
 * of the source text, so a detail found later can only have come back through LCM's recall tools.
 */

/** The subset of an OpenAI chat.completions request the fake reads. */
export interface ChatMessage {
  role: string;
  content?: string | { type?: string; text?: string }[] | null;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
}
export interface ChatRequest {
  model?: string;
  messages?: ChatMessage[];
  tools?: { function?: { name?: string } }[];
  stream?: boolean;
}

export type FakeReply =
  | { kind: "text"; text: string }
  | { kind: "toolCall"; name: string; arguments: Record<string, unknown> }
  | { kind: "error"; status: number; body: unknown };

/** agent: a model turn (tools offered); summary: a summarizer call; other: any other tool-less completion. */
export type RequestKind = "agent" | "summary" | "other";

/** Prefix of every fake summary: find compaction output in requests and the database by it. */
export const FAKE_SUMMARY_PREFIX = "LCM_FAKE_SUMMARY";

export function callToolMarker(tool: string, args: Record<string, unknown>): string {
  return `[[call:${tool} ${JSON.stringify(args)}]]`;
}
export function overflowOnceMarker(id: string): string {
  return `[[overflow-once:${id}]]`;
}
/** The model takes `ms` milliseconds before it answers each request of the turn (a slow provider). */
export function delayMarker(ms: number): string {
  return `[[delay:${ms}]]`;
}

/** How a summarizer's prompt reads: OpenClaw's own ("Summarize …") and LCM's ("You compress the history …"). */
const SUMMARIZER_HINTS = [/summar/i, /compress the history/i];
const CALL_MARKER = /\[\[call:([A-Za-z0-9_.-]+) (\{.*?\})\]\]/gs;
const REPLY_MARKER = /\[\[reply:(.*?)\]\]/s;
const OVERFLOW_MARKER = /\[\[overflow-once:([A-Za-z0-9_-]+)\]\]/;
const DELAY_MARKER = /\[\[delay:(\d{1,6})\]\]/;

/** How long the model waits before answering this request (`[[delay:<ms>]]` in the current turn), 0 without one. */
export function scriptedDelayMs(request: ChatRequest): number {
  if (classifyRequest(request) !== "agent") return 0;
  const match = DELAY_MARKER.exec(currentTurnOf(request).userTexts.join("\n"));
  return match ? Number(match[1]) : 0;
}

export function textOf(message: ChatMessage | undefined): string {
  if (!message?.content) return "";
  if (typeof message.content === "string") return message.content;
  return message.content.map((part) => part.text ?? "").join("");
}

/** The system prompt (where OpenClaw puts an engine's systemPromptAddition and a sub-agent's extra prompt). */
export function systemTextOf(request: ChatRequest): string {
  return (request.messages ?? []).filter((message) => message.role === "system" || message.role === "developer")
    .map(textOf).join("\n");
}

/** Every message text, in order, one per line (for "contains" assertions). */
export function allTextOf(request: ChatRequest): string {
  return (request.messages ?? []).map(textOf).join("\n");
}

export function toolNamesOf(request: ChatRequest): string[] {
  return (request.tools ?? []).flatMap((tool) => (tool.function?.name ? [tool.function.name] : []));
}

export function classifyRequest(request: ChatRequest): RequestKind {
  if (toolNamesOf(request).length > 0) return "agent";
  const messages = request.messages ?? [];
  const system = systemTextOf(request);
  const firstUser = textOf(messages.find((message) => message.role === "user")).slice(0, 2_000);
  return SUMMARIZER_HINTS.some((hint) => hint.test(system) || hint.test(firstUser)) ? "summary" : "other";
}

/** The current turn: the trailing run of user messages, and the assistant/tool messages of its tool loop. */
export function currentTurnOf(request: ChatRequest): { userTexts: string[]; loop: ChatMessage[] } {
  const messages = request.messages ?? [];
  let end = messages.length;
  while (end > 0 && (messages[end - 1]!.role === "tool" || messages[end - 1]!.role === "assistant")) end--;
  let start = end;
  while (start > 0 && messages[start - 1]!.role === "user") start--;
  return { userTexts: messages.slice(start, end).map(textOf), loop: messages.slice(end) };
}

/** Texts of the tool results in the current turn's tool loop, oldest first. */
export function toolResultsOf(request: ChatRequest): string[] {
  return currentTurnOf(request).loop.filter((message) => message.role === "tool").map(textOf);
}

export interface ScriptState {
  /** Overflow markers already answered with an error. */
  usedOverflowIds: Set<string>;
  /** The window the overflow error names; it claims the request was 2.5 times that. */
  contextWindow: number;
}

export function scriptedReply(request: ChatRequest, index: number, state: ScriptState): FakeReply {
  const kind = classifyRequest(request);
  if (kind === "summary") {
    return { kind: "text", text: `${FAKE_SUMMARY_PREFIX}_${index}: an earlier stretch of this conversation, condensed.` };
  }
  const { userTexts, loop } = currentTurnOf(request);
  const turnText = userTexts.join("\n");
  const overflow = OVERFLOW_MARKER.exec(turnText)?.[1];
  if (kind === "agent" && overflow && !state.usedOverflowIds.has(overflow)) {
    state.usedOverflowIds.add(overflow);
    return contextOverflowError(state.contextWindow);
  }
  const calls = [...turnText.matchAll(CALL_MARKER)].map((match) => ({ tool: match[1]!, json: match[2]! }));
  const callsDone = loop.filter((message) => message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0).length;
  const next = calls[callsDone];
  if (kind === "agent" && next) return toolCallReply(request, next.tool, next.json);
  const reply = REPLY_MARKER.exec(turnText)?.[1];
  if (reply !== undefined) return { kind: "text", text: reply };
  if (callsDone > 0) return { kind: "text", text: `FAKE_MODEL read ${callsDone} tool result(s) (request ${index}).` };
  return { kind: "text", text: `ack ${index}` };
}

function toolCallReply(request: ChatRequest, tool: string, json: string): FakeReply {
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return { kind: "text", text: `FAKE_MODEL: the call marker for ${tool} has invalid JSON arguments: ${json}` };
  }
  const offered = toolNamesOf(request);
  if (offered.includes(tool)) return { kind: "toolCall", name: tool, arguments: args };
  // With Tool Search on, plugin tools sit behind the `tool_call` meta-tool.
  if (offered.includes("tool_call")) return { kind: "toolCall", name: "tool_call", arguments: { id: tool, args } };
  return { kind: "text", text: `FAKE_MODEL: tool ${tool} is not offered (offered: ${offered.join(", ")})` };
}

export function contextOverflowError(contextWindow: number, measuredTokens = Math.round(contextWindow * 2.5)): FakeReply {
  return {
    kind: "error",
    status: 400,
    body: {
      error: {
        message:
          `This model's maximum context length is ${contextWindow} tokens. However, your messages resulted in ` +
          `${measuredTokens} tokens. Please reduce the length of the messages.`,
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    },
  };
}
