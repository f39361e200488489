/**
 * The inspector over HTTP, for both ways in: the standalone server of `lcm inspect` and the gateway route behind the
 * Control UI tab. Under `basePath` it serves the page (bundled at build time into dist/inspector-web: no network
 * needed) and the JSON API (`api/…`, inspector-api.ts). A repair is a POST that must carry the `x-lcm-inspector`
 * header (a page on another site cannot send it without the browser asking first); the standalone server also
 * answers only requests addressed to its own loopback host (no DNS rebinding).
 */
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InspectorApi } from "./inspector-api.js";

export const WRITE_HEADER = "x-lcm-inspector";
const MAX_BODY_BYTES = 1_000_000;

const ASSETS: Record<string, string> = {
  "": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};
const FILE_OF: Record<string, string> = { "": "index.html", "app.js": "app.js", "app.css": "app.css" };

/** Where the bundled page is: beside the compiled code (dist/inspector-web) or, from the sources, in dist/. */
export function inspectorAssetDirectory(): string | null {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, "../../inspector-web"), join(here, "../../dist/inspector-web")]) {
    if (existsSync(join(candidate, "index.html"))) return candidate;
  }
  return null;
}

export interface InspectorHttpOptions {
  /** The path the inspector lives under, without a trailing slash: "" (standalone) or "/lcm/inspector". */
  basePath: string;
  api: () => InspectorApi;
  /** Host headers accepted (the standalone server's own); absent: any (the gateway checks its own requests). */
  allowedHosts?: () => readonly string[];
  assetDirectory?: string | null;
}

/** A request handler: true when the request was the inspector's (answered), false when not under basePath. */
export function createInspectorHandler(options: InspectorHttpOptions): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  const assets = options.assetDirectory === undefined ? inspectorAssetDirectory() : options.assetDirectory;
  return async (request, response) => {
    const url = new URL(request.url ?? "/", "http://inspector.invalid");
    if (url.pathname !== options.basePath && !url.pathname.startsWith(`${options.basePath}/`)) return false;
    const allowed = options.allowedHosts?.();
    if (allowed && !allowed.includes(request.headers.host ?? "")) {
      send(response, 421, "text/plain; charset=utf-8", `This inspector answers only requests to ${allowed.join(" or ")}.`);
      return true;
    }
    if (url.pathname === options.basePath) {
      response.writeHead(308, { location: `${options.basePath}/${url.search}` }).end();
      return true;
    }
    const path = url.pathname.slice(options.basePath.length + 1);
    if (path.startsWith("api/")) {
      await serveApi(options.api(), request, response, path.slice(4), url.searchParams);
      return true;
    }
    serveAsset(assets, path, request, response);
    return true;
  };
}

async function serveApi(api: InspectorApi, request: IncomingMessage, response: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
  const method = request.method ?? "GET";
  let body: unknown = null;
  if (method === "POST") {
    if (request.headers[WRITE_HEADER] !== "1") {
      sendJson(response, 403, { error: `A repair request must carry the ${WRITE_HEADER}: 1 header (sent by the inspector's page).` });
      return;
    }
    const text = await readBody(request);
    if (text === null) {
      sendJson(response, 413, { error: `The request body is larger than ${MAX_BODY_BYTES} bytes.` });
      return;
    }
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      sendJson(response, 400, { error: "The request body is not JSON." }); // nothing was read from it
      return;
    }
  } else if (method !== "GET" && method !== "HEAD") {
    sendJson(response, 405, { error: `The inspector's API answers GET and POST, not ${method}.` });
    return;
  }
  const answer = await api.handle({ method: method === "HEAD" ? "GET" : method, path, query, body });
  sendJson(response, answer.status, answer.body);
}

function serveAsset(directory: string | null, path: string, request: IncomingMessage, response: ServerResponse): void {
  const type = ASSETS[path];
  if (type === undefined) {
    send(response, 404, "text/plain; charset=utf-8", `No inspector page ${path}.`);
    return;
  }
  if (directory === null) {
    send(response, 503, "text/plain; charset=utf-8", "The inspector's page is not built: run `npm run build` in the plugin's folder.");
    return;
  }
  const content = readFileSync(join(directory, FILE_OF[path]!));
  response.writeHead(200, { ...SECURITY_HEADERS, "content-type": type, "cache-control": "no-cache" });
  response.end(request.method === "HEAD" ? undefined : content);
}

const SECURITY_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  send(response, status, "application/json; charset=utf-8", JSON.stringify(body));
}

function send(response: ServerResponse, status: number, type: string, text: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, "content-type": type, "cache-control": "no-store" });
  response.end(text);
}

function readBody(request: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    request.on("end", () => resolve(size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}
