/**
 * The standalone inspector of `lcm inspect`: an HTTP server on 127.0.0.1 only (a free port unless one is given)
 * serving the inspector for one database, with or without a gateway running. It answers only requests addressed to
 * its own loopback address, and stops when asked (the command stops it on Ctrl-C).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { InspectorApi } from "./inspector-api.js";
import { createInspectorHandler } from "./inspector-http.js";

export interface RunningInspector {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startInspectorServer(options: { api: InspectorApi; port?: number; assetDirectory?: string | null }): Promise<RunningInspector> {
  let port = options.port ?? 0;
  const handler = createInspectorHandler({
    basePath: "", api: () => options.api, allowedHosts: () => [`127.0.0.1:${port}`, `localhost:${port}`],
    ...(options.assetDirectory !== undefined ? { assetDirectory: options.assetDirectory } : {}),
  });
  const server: Server = createServer((request, response) => {
    handler(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
      response.end(`The inspector failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
