/**
 * A fake OpenAI-compatible model provider on 127.0.0.1 (port 0) for the end-to-end suite: chat.completions with
 * and without `stream: true`, tool calls, usage figures counted with a real tokenizer (request-tokens.ts; OpenClaw's
 * preflight compaction reads them), and a record of every request in memory and in a JSONL file. What it answers is decided by
 * fake-model-script.ts; a test can put its own rules in front.
 */
import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type ChatRequest,
  classifyRequest,
  contextOverflowError,
  type FakeReply,
  type RequestKind,
  type ScriptState,
  scriptedDelayMs,
  scriptedReply,
} from "./fake-model-script.js";
import { requestTokens, textTokens } from "./request-tokens.js";

export const FAKE_MODEL_ID = "fake-model";

export interface RecordedRequest {
  /** 1-based, in arrival order. */
  index: number;
  receivedAt: number;
  method: string;
  path: string;
  kind: RequestKind;
  body: ChatRequest;
  reply: FakeReply;
  /** The prompt tokens reported back: the request's messages and tool schemas by a real tokenizer (o200k). */
  promptTokens: number;
}

/** A test's own answer for requests it recognizes; returning undefined falls through to the script. */
export type ReplyRule = (request: ChatRequest, index: number) => FakeReply | undefined;

export interface FakeModelServerOptions {
  /** JSONL file receiving every recorded request. */
  logFile: string;
  /** The model's context window (named in overflow errors). */
  contextWindow: number;
  /**
   * Refuse, as providers do, a request whose prompt (counted with a real tokenizer, as reported in `usage`) plus its
   * requested output does not fit the window: a 400 `context_length_exceeded`.
   */
  enforceWindow?: boolean;
}

export class FakeModelServer {
  private readonly recorded: RecordedRequest[] = [];
  private readonly rules: ReplyRule[] = [];
  private readonly state: ScriptState;

  private constructor(private readonly server: Server, private readonly options: FakeModelServerOptions) {
    this.state = { usedOverflowIds: new Set(), contextWindow: options.contextWindow };
  }

  static async start(options: FakeModelServerOptions): Promise<FakeModelServer> {
    let instance: FakeModelServer | undefined;
    const server = createServer((request, response) => {
      void instance!.handle(request, response).catch((error: unknown) => {
        response.writeHead(500, { "content-type": "application/json" });
        response.end(JSON.stringify({ error: { message: `fake model server failed: ${String(error)}` } }));
      });
    });
    instance = new FakeModelServer(server, options);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return instance;
  }

  /** The provider `baseUrl` for openclaw.json. */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Rules run newest first, before the marker script. */
  addRule(rule: ReplyRule): void {
    this.rules.unshift(rule);
  }

  /** How many requests arrived so far: pass it to `requests({ since })` to see only what came after. */
  mark(): number {
    return this.recorded.length;
  }

  requests(filter: { since?: number; kind?: RequestKind } = {}): RecordedRequest[] {
    return this.recorded
      .slice(filter.since ?? 0)
      .filter((request) => filter.kind === undefined || request.kind === filter.kind);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const raw = await readBody(request);
    const path = request.url ?? "/";
    if (request.method === "GET" && path.startsWith("/v1/models")) {
      return sendJson(response, 200, { object: "list", data: [{ id: FAKE_MODEL_ID, object: "model" }] });
    }
    if (request.method !== "POST" || !path.endsWith("/chat/completions")) {
      return sendJson(response, 404, { error: { message: `the fake model serves only chat.completions, not ${path}` } });
    }
    const body = (raw ? JSON.parse(raw) : {}) as ChatRequest;
    const delayMs = scriptedDelayMs(body);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const index = this.recorded.length + 1;
    const promptTokens = requestTokens(body);
    const requestedOutput = Number((body as { max_completion_tokens?: unknown; max_tokens?: unknown }).max_completion_tokens ??
      (body as { max_tokens?: unknown }).max_tokens ?? 0) || 0;
    const reply = this.options.enforceWindow && promptTokens + requestedOutput > this.options.contextWindow
      ? contextOverflowError(this.options.contextWindow, promptTokens + requestedOutput)
      : this.replyFor(body, index);
    const usage = usageFor(promptTokens, reply);
    const record: RecordedRequest = {
      index, receivedAt: Date.now(), method: request.method, path, kind: classifyRequest(body), body, reply,
      promptTokens: usage.prompt_tokens!,
    };
    this.recorded.push(record);
    appendFileSync(this.options.logFile, `${JSON.stringify(record)}\n`);
    if (reply.kind === "error") return sendJson(response, reply.status, reply.body);
    if (body.stream) return streamReply(response, body, index, reply, usage);
    const message = reply.kind === "toolCall"
      ? { role: "assistant", content: null, tool_calls: [toolCallOf(reply, index)] }
      : { role: "assistant", content: reply.text };
    sendJson(response, 200, {
      id: `chatcmpl-${index}`, object: "chat.completion", created: nowSeconds(), model: body.model ?? FAKE_MODEL_ID,
      choices: [{ index: 0, message, finish_reason: reply.kind === "toolCall" ? "tool_calls" : "stop" }],
      usage,
    });
  }

  private replyFor(body: ChatRequest, index: number): FakeReply {
    for (const rule of this.rules) {
      const reply = rule(body, index);
      if (reply) return reply;
    }
    return scriptedReply(body, index, this.state);
  }
}

type TextOrToolCall = Exclude<FakeReply, { kind: "error" }>;

function streamReply(
  response: ServerResponse, body: ChatRequest, index: number, reply: TextOrToolCall, usage: Record<string, number>,
): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const base = { id: `chatcmpl-${index}`, object: "chat.completion.chunk", created: nowSeconds(), model: body.model ?? FAKE_MODEL_ID };
  const send = (chunk: unknown) => response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  const delta = reply.kind === "toolCall"
    ? { role: "assistant", tool_calls: [{ index: 0, ...toolCallOf(reply, index) }] }
    : { role: "assistant", content: reply.text };
  send({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: reply.kind === "toolCall" ? "tool_calls" : "stop" }] });
  send({ ...base, choices: [], usage });
  response.write("data: [DONE]\n\n");
  response.end();
}

function toolCallOf(reply: Extract<FakeReply, { kind: "toolCall" }>, index: number) {
  return { id: `call_${index}`, type: "function", function: { name: reply.name, arguments: JSON.stringify(reply.arguments) } };
}

/** The request's real prompt tokens, and the reply's. */
function usageFor(promptTokens: number, reply: FakeReply): Record<string, number> {
  const output = reply.kind === "text" ? reply.text : reply.kind === "toolCall" ? JSON.stringify(reply.arguments) : "";
  const completionTokens = Math.max(1, textTokens(output));
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
