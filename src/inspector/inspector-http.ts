/**
 * The inspector over HTTP, for both ways in: the standalone server of `lcm inspect` and the gateway route behind the
 * Control UI tab. Under `basePath` it serves the page (bundled at build time into dist/inspector-web: no network
 * needed) and the JSON API (`api/…`, inspector-api.ts). A repair is a POST that must carry the `x-lcm-inspector`
 * header (a page on another site cannot send it without the browser asking first); the standalone server also
 * answers only requests addressed to its own loopback host (no DNS rebinding).
 *
 * With `inlinePage` (the Control UI tab) the page is one self-contained document per view: its style, its script and
 * the API answers the view needs (inspector-view.ts) are inside it. OpenClaw renders the tab's route in a frame
 * sandboxed with `allow-scripts` alone: an opaque origin, from which the page's script file (a module), its style
 * sheet and every `fetch` of the API are cross-origin reads, blocked. A navigation of the frame itself is not: it is a
 * GET that carries OpenClaw's grant, so each click in the tab asks the server for the next view.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InspectorApi } from "./inspector-api.js";
import { readsFor, viewFromQuery } from "./inspector-view.js";

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
  /** Serve each view as one document with its style, script and data inside (the Control UI tab's sandboxed frame). */
  inlinePage?: boolean;
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
    if (path === "" && options.inlinePage && assets !== null) {
      await serveInlinePage(options.api(), assets, url.searchParams, request, response);
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

/** Where the page's style and script are, in index.html; the inline page puts them in their place. */
export const PAGE_STYLE = '<link rel="stylesheet" href="app.css">';
export const PAGE_SCRIPT = '<script defer src="app.js"></script>';
/** The element the inline page's answers are in (the page's script looks for it). */
export const PAGE_DATA_ID = "lcm-page-data";

async function serveInlinePage(api: InspectorApi, directory: string, query: URLSearchParams, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const view = viewFromQuery(query);
  const answers: Record<string, { status: number; body: unknown }> = {};
  const read = async (target: string) => {
    const [path = "", search = ""] = target.split("?", 2);
    answers[target] = await api.handle({ method: "GET", path, query: new URLSearchParams(search), body: null });
  };
  await read("overview");
  const overview = answers.overview!;
  const listed = overview.status === 200 ? (overview.body as { conversations: { conversationId: number }[] }).conversations : [];
  for (const target of readsFor(view, view.conversationId ?? listed[0]?.conversationId ?? null)) await read(target);
  const nonce = randomBytes(16).toString("base64");
  const template = readFileSync(join(directory, "index.html"), "utf8");
  const style = readFileSync(join(directory, "app.css"), "utf8");
  const script = readFileSync(join(directory, "app.js"), "utf8");
  // Functions as replacements: the script's own `$&` and `$'` must not be read as patterns.
  const page = template
    .replace(PAGE_STYLE, () => `<style>${style}</style>`)
    .replace(PAGE_SCRIPT, () => `<script type="application/json" id="${PAGE_DATA_ID}">${inlineJson({ answers })}</script>\n  <script nonce="${nonce}">${script}</script>`);
  response.writeHead(200, {
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`,
    "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "content-type": "text/html; charset=utf-8", "cache-control": "no-store",
  });
  response.end(request.method === "HEAD" ? undefined : page);
}

/** JSON that cannot end the script element it is in: every "<" escaped (JSON.parse reads \u003c back). */
function inlineJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
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
