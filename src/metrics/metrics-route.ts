/**
 * The gateway HTTP route serving the metrics in Prometheus text format (GET or HEAD; registered only when
 * metricsEnabled is set, behind the gateway's own auth). Contract: never throws; answers 500 with the reason if the
 * scrape itself fails.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { describeError } from "../errors.js";
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus-text.js";

export const METRICS_PATH = "/lcm/metrics";

export function createMetricsRoute(scrape: () => Promise<string>): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  return async (request, response) => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.statusCode = 405;
      response.setHeader("allow", "GET, HEAD");
      response.end();
      return true;
    }
    try {
      const text = await scrape();
      response.statusCode = 200;
      response.setHeader("content-type", PROMETHEUS_CONTENT_TYPE);
      response.setHeader("cache-control", "no-store");
      response.end(request.method === "HEAD" ? undefined : text);
    } catch (error) {
      response.statusCode = 500;
      response.setHeader("content-type", "text/plain; charset=utf-8");
      response.end(`LCM metrics failed: ${describeError(error)}\n`);
    }
    return true;
  };
}
