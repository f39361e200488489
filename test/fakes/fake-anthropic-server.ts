/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1 (port 0): each request takes the next scripted reply
 * (a status and JSON body, optional headers, or a hang) and is recorded with its headers and parsed body.
 */
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type ScriptedReply =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { hang: true };

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export class FakeAnthropicServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: ScriptedReply[] = [];
  private server: Server | undefined;
  baseURL = "";

  /** Replies to the next requests, in order; the last one repeats. */
  script(...replies: ScriptedReply[]): this {
    this.replies.push(...replies);
    return this;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let raw = "";
      request.on("data", (chunk) => (raw += chunk));
      request.on("end", () => {
        this.requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: JSON.parse(raw || "{}") });
        const reply = this.replies.length > 1 ? this.replies.shift()! : this.replies[0];
        if (!reply || "hang" in reply) return; // never answers; closed by stop()
        response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        response.end(JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.baseURL = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

export function messageReply(content: unknown[], stopReason = "end_turn"): ScriptedReply {
  return {
    status: 200,
    body: {
      id: "msg_fake", type: "message", role: "assistant", model: "claude-fake", content, stop_reason: stopReason,
      stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 },
    },
  };
}

export function errorReply(status: number, type: string, headers?: Record<string, string>): ScriptedReply {
  return { status, body: { type: "error", error: { type, message: `fake ${type}` } }, ...(headers ? { headers } : {}) };
}
