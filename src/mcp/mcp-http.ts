/**
 * `lcm mcp --http`: the SDK's Streamable HTTP transport on a loopback address, stateless (a fresh server and
 * transport per request, answers as JSON), at `/mcp`. Every request must carry `Authorization: Bearer <token>` and a
 * Host header naming the loopback address (a web page cannot reach it through DNS rebinding). The server listens on
 * loopback only: settings refuse any other address.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { describeError } from "../errors.js";
import type { McpBackend } from "./mcp-backend.js";
import type { McpHttpSettings } from "./mcp-settings.js";
import { createLcmMcpServer } from "./lcm-mcp-server.js";

export const MCP_PATH = "/mcp";

export interface McpHttpListener {
  /** `http://127.0.0.1:PORT/mcp`, with the port actually bound. */
  url: string;
  close(): Promise<void>;
}

export async function listenMcpHttp(backend: McpBackend, settings: McpHttpSettings): Promise<McpHttpListener> {
  const expectedToken = digest(settings.token);
  let allowedHosts: Set<string> = new Set();
  const http: HttpServer = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      backend.logger.error(`lcm mcp: an HTTP request failed: ${describeError(error)}`);
      if (!response.headersSent) reply(response, 500, ErrorCodes.internal, "The request failed inside the server; see its stderr.");
      else response.end();
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!allowedHosts.has(request.headers.host ?? "")) return reply(response, 403, ErrorCodes.refused, "The Host header must name this server's loopback address.");
    if (!isAuthorized(request.headers.authorization, expectedToken)) {
      response.setHeader("WWW-Authenticate", 'Bearer realm="lcm"');
      return reply(response, 401, ErrorCodes.refused, "Missing or wrong bearer token: send Authorization: Bearer <the token lcm mcp was started with (LCM_MCP_TOKEN)>.");
    }
    if ((request.url ?? "").split("?")[0] !== MCP_PATH) return reply(response, 404, ErrorCodes.refused, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    if (request.method !== "POST") {
      response.setHeader("Allow", "POST");
      return reply(response, 405, ErrorCodes.refused, "This server is stateless: send each MCP message as a POST.");
    }
    const server = createLcmMcpServer(backend);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response);
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(settings.port, settings.host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const { port } = http.address() as AddressInfo;
  const host = settings.host === "::1" ? "[::1]" : settings.host;
  allowedHosts = new Set([`${host}:${port}`, ...(settings.host === "::1" ? [] : [`localhost:${port}`, `127.0.0.1:${port}`])]);
  return {
    url: `http://${host}:${port}${MCP_PATH}`,
    close: () => new Promise<void>((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}

/** JSON-RPC error codes of the answers the transport never sees. */
const ErrorCodes = { refused: -32000, internal: -32603 } as const;

function reply(response: ServerResponse, status: number, code: number, message: string): void {
  response.writeHead(status, { "Content-Type": "application/json" });
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Compares digests in constant time, so the answer's timing says nothing about the token. */
function isAuthorized(header: string | undefined, expected: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match !== null && timingSafeEqual(digest(match[1]!), expected);
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
