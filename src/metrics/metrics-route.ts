/**
 * The gateway HTTP route serving the metrics in Prometheus text format (GET or HEAD, behind the gateway's own auth).
 * It is registered always and reads metricsEnabled on every request: 404 with how to turn it on while it is off, so
 * a live settings change applies from the next request. Contract: never throws; answers 500 with the reason if the
 * scrape itself fails.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { describeError } from "../errors.js";
import { PROMETHEUS_CONTENT_TYPE } from "./prometheus-text.js";

export const METRICS_PATH = "/lcm/metrics";

export interface MetricsRouteSource {
  /** Whether metrics are served now (the current metricsEnabled). */
  enabled(): boolean;
  scrape(): Promise<string>;
}

export const METRICS_OFF_TEXT =
  "LCM metrics are off. Turn them on with `openclaw config set plugins.entries.lcm.config.metricsEnabled true` " +
  "(or LCM_METRICS_ENABLED=1 for the gateway); they are served from the next request, no restart needed.\n";

export function createMetricsRoute(source: MetricsRouteSource): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  return async (request, response) => {
    if (!source.enabled()) {
      response.statusCode = 404;
      response.setHeader("content-type", "text/plain; charset=utf-8");
      response.end(request.method === "HEAD" ? undefined : METRICS_OFF_TEXT);
      return true;
    }
    if (request.method !== "GET" && request.method !== "HEAD") {
      response.statusCode = 405;
      response.setHeader("allow", "GET, HEAD");
      response.end();
      return true;
    }
    try {
      const text = await source.scrape();
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
