/**
 * What the window suites (default-config, small-windows) check on a request the fake model received, and the figures
 * they report: whether it fits the window by a real tokenizer, whether OpenClaw clamped its reply, which part of it
 * is LCM's (the assembled history between OpenClaw's system prompt and the current turn), whether it carries a
 * summary or LCM's memory floor; and, per turn, what OpenClaw gave and what assemble returned (the plugin's record).
 */
import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { type ChatMessage, type ChatRequest, textOf } from "../fake-model-script.js";
import type { RecordedRequest } from "../fake-model-server.js";
import { textTokens } from "../request-tokens.js";
import type { HostSuite } from "./host-suite.js";
import type { AssemblyFigures } from "./plugin-database.js";

/** Lines the gateway writes when a turn or a compaction failed. */
const FAILURE_LINES = [
  /Preflight compaction required but failed/i, /Compaction failed/i, /context overflow/i, /insufficient_output_budget/i,
  /auto-compaction failed/i,
];

/** The gateway log's lines that report a failed turn or compaction. */
export function failureLines(suite: HostSuite): string[] {
  return suite.logLines().filter((line) => FAILURE_LINES.some((pattern) => pattern.test(line.text))).map((line) => line.text);
}

/** `all` without one occurrence of each of `expected`. */
export function withoutOnce(all: string[], expected: string[]): string[] {
  const left = [...all];
  for (const line of expected) {
    const index = left.indexOf(line);
    if (index >= 0) left.splice(index, 1);
  }
  return left;
}

function requestedOutput(request: RecordedRequest): number | undefined {
  const body = request.body as { max_completion_tokens?: number; max_tokens?: number };
  return body.max_completion_tokens ?? body.max_tokens;
}

/** The request's prompt (real tokens) and the reply it asks for do not fit the window: a real model refuses it. */
export function overWindow(request: RecordedRequest, window: number): boolean {
  return request.promptTokens + (requestedOutput(request) ?? 0) > window;
}

/** OpenClaw lowered the reply below the model's maximum (its own measure, characters / 3.2, said the window was full). */
export function clampedOutput(request: RecordedRequest, maxOutputTokens: number): boolean {
  const output = requestedOutput(request);
  return output !== undefined && output < maxOutputTokens;
}

const HOST_CONTEXT_MARKER = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";

/**
 * LCM's part of a request: the messages between OpenClaw's system prompt and the current turn's message (the last
 * user message before the tool loop), that is the memory floor, the summaries and the raw history LCM assembled.
 */
export function lcmMessages(request: ChatRequest): ChatMessage[] {
  const messages = request.messages ?? [];
  let current = messages.length - 1;
  while (current >= 0 && messages[current]!.role !== "user") current--;
  while (current > 0 && textOf(messages[current]).includes(HOST_CONTEXT_MARKER)) current--;
  let start = 0;
  while (start < messages.length && (messages[start]!.role === "system" || messages[start]!.role === "developer")) start++;
  return messages.slice(start, Math.max(start, current));
}

/**
 * OpenClaw moves the non-behavioural end of its system prompt ("Runtime: agent=… | session=…") into the first user
 * message after it, which is LCM's first message when LCM sent one: that part is OpenClaw's.
 */
const RELOCATED_RUNTIME = "\n\nRuntime: agent=";

/** LCM's part of a request in real tokens (its messages' text, without what OpenClaw appended to the first). */
export function lcmTokens(request: ChatRequest): number {
  return lcmMessages(request).reduce((total, message, index) => {
    const text = textOf(message);
    const own = index === 0 && text.includes(RELOCATED_RUNTIME) ? text.slice(0, text.lastIndexOf(RELOCATED_RUNTIME)) : text;
    return total + textTokens(own) + (message.tool_calls ? textTokens(JSON.stringify(message.tool_calls)) : 0);
  }, 0);
}

/** The text of the current turn's message (the last user message that is not OpenClaw's internal context carrier). */
export function currentUserText(request: ChatRequest): string {
  const messages = request.messages ?? [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === "user" && !textOf(message).includes(HOST_CONTEXT_MARKER)) return textOf(message);
  }
  return "";
}

export function carriesSummary(request: ChatRequest): boolean {
  return lcmMessages(request).some((message) => /<summary id="sum_[0-9a-f]{16}"/.test(textOf(message)));
}

export function carriesFloor(request: ChatRequest): boolean {
  return lcmMessages(request).some((message) => textOf(message).includes("<earlier_history>"));
}

/** The summary sizes LCM's summarizer prompts asked for ("Aim for at most about N tokens"). */
export function summaryTargets(requests: readonly RecordedRequest[]): number[] {
  return requests.filter((request) => request.kind === "summary").flatMap((request) => {
    const match = /Aim for at most about (\d+) tokens/.exec((request.body.messages ?? []).map(textOf).join("\n"));
    return match ? [Number(match[1])] : [];
  });
}

/** What the plugin recorded about the last turn's first model call (conversations.last_assembly, schema 15). */
/** Per window and profile: the budget OpenClaw passed, what assemble returned, the largest request. */
export interface WindowFigures {
  scenario: string;
  turns: number;
  hostBudget: { min: number; max: number };
  lcmBudget: { min: number; max: number };
  assembled: { min: number; max: number };
  largestRequest: { tokens: number; outputAsked: number; turn: number | string };
  clampedRequests: number;
  requests: number;
}

/** Collects the figures of a scenario turn by turn; `write` appends them to `window-figures.jsonl` and prints them. */
export class FiguresRecorder {
  private readonly assemblies: AssemblyFigures[] = [];
  private readonly requests: { turn: number | string; request: RecordedRequest }[] = [];

  constructor(private readonly scenario: string, private readonly maxOutputTokens: number) {}

  turn(turn: number | string, requests: readonly RecordedRequest[], assembly: AssemblyFigures | null): void {
    for (const request of requests) if (request.kind === "agent") this.requests.push({ turn, request });
    if (assembly) this.assemblies.push(assembly);
  }

  figures(): WindowFigures {
    const range = (values: number[]) => ({ min: Math.min(...values), max: Math.max(...values) });
    const largest = this.requests.reduce((best, entry) => (entry.request.promptTokens > (best?.request.promptTokens ?? -1) ? entry : best),
      this.requests[0]);
    return {
      scenario: this.scenario,
      turns: this.assemblies.length,
      hostBudget: range(this.assemblies.map((assembly) => assembly.hostBudgetTokens)),
      lcmBudget: range(this.assemblies.map((assembly) => assembly.budgetTokens)),
      assembled: range(this.assemblies.map((assembly) => assembly.assembledTokens)),
      largestRequest: {
        tokens: largest?.request.promptTokens ?? 0,
        outputAsked: Number((largest?.request.body as { max_completion_tokens?: number } | undefined)?.max_completion_tokens ?? 0),
        turn: largest?.turn ?? "",
      },
      clampedRequests: this.requests.filter(({ request }) => clampedOutput(request, this.maxOutputTokens)).length,
      requests: this.requests.length,
    };
  }

  write(suite: HostSuite): WindowFigures {
    const figures = this.figures();
    appendFileSync(join(suite.dir, "..", "window-figures.jsonl"), `${JSON.stringify(figures)}\n`);
    console.log(`[window figures] ${JSON.stringify(figures)}`);
    return figures;
  }
}
