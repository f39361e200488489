/**
 * The inspector's two ways in, without a browser: the gateway route and Control UI tab that register(api) adds
 * (grouped SDK form, gateway auth, read-only), and the standalone server of `lcm inspect` (loopback host only,
 * repairs only with the page's header, in write mode).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import plugin, { INSPECTOR_PATH } from "../../src/plugin.js";
import { systemClock } from "../../src/contracts.js";
import { openSqliteBackend } from "../../src/sqlite/open-sqlite-backend.js";
import type { ControlUiDescriptor, HttpRoute } from "../../src/host/openclaw-types.js";
import { createInspectorHandler, PAGE_SCRIPT, PAGE_STYLE } from "../../src/inspector/inspector-http.js";
import { inspectorApiOn } from "../../src/inspector/inspector-wiring.js";
import { type RunningInspector, startInspectorServer } from "../../src/inspector/inspector-server.js";
import { DefaultTokenEstimator } from "../../src/tokens/default-token-estimator.js";
import { FakePluginApi } from "../fakes/fake-plugin-api.js";
import { RecordingLogger } from "../helpers/engine.js";
import { fallbackDatabase, recordingModel } from "../repair/repair-fixture.js";

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/** A raw request (fetch cannot set the Host header). */
function send(port: number, path: string, options: { method?: string; host?: string; headers?: Record<string, string>; body?: string } = {}) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: { host: options.host ?? `127.0.0.1:${port}`, ...options.headers } }, (response) => {
      let body = "";
      response.on("data", (chunk) => (body += chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on("error", reject);
    request.end(options.body);
  });
}

describe("the Control UI tab", () => {
  it("registers a gateway-auth route and a tab descriptor through api.session.controls, serving the API read-only", async () => {
    const harness = await fallbackDatabase();
    const api = new FakePluginApi({ databasePath: harness.databasePath });
    const routes: HttpRoute[] = [];
    const descriptors: ControlUiDescriptor[] = [];
    Object.assign(api, {
      registerHttpRoute: (route: HttpRoute) => routes.push(route),
      session: { controls: { registerControlUiDescriptor: (descriptor: ControlUiDescriptor) => descriptors.push(descriptor) } },
    });
    plugin.register(api);
    expect(descriptors).toEqual([expect.objectContaining({ surface: "tab", path: `${INSPECTOR_PATH}/`, requiredScopes: ["operator.read"] })]);
    const route = routes.find((candidate) => candidate.path === INSPECTOR_PATH)!;
    expect(route).toMatchObject({ auth: "gateway", match: "prefix" });
    const server = createServer((request, response) => void route.handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    stops.push(() => new Promise((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;

    const overview = await send(port, `${INSPECTOR_PATH}/api/overview`);
    expect(overview.status).toBe(200);
    const fallbacks = harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries WHERE level = 'fallback'")!.n;
    expect(fallbacks).toBeGreaterThan(0);
    expect(JSON.parse(overview.body)).toMatchObject({ readOnly: true, conversations: [{ conversationId: 1, health: { fallbackSummaries: fallbacks } }] });
    const dag = JSON.parse((await send(port, `${INSPECTOR_PATH}/api/conversations/1/dag`)).body);
    expect(dag.nodes).toHaveLength(harness.db.get<{ n: number }>("SELECT count(*) AS n FROM summaries")!.n);
    const refused = await send(port, `${INSPECTOR_PATH}/api/repairs/propose`, {
      method: "POST", headers: { "x-lcm-inspector": "1", "content-type": "application/json" }, body: JSON.stringify({ kind: "dissolve", summaryId: dag.nodes[0].summaryId }),
    });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error).toContain("read-only");
    expect((await send(port, INSPECTOR_PATH)).status).toBe(308);
  });
});

describe("the Control UI tab's page: one document per view, its data inside", () => {
  /** A page like the bundled one (markers where the style and script go), and a route serving it inline. */
  async function inlineRoute() {
    const harness = await fallbackDatabase();
    const assets = mkdtempSync(join(tmpdir(), "lcm-inline-page-"));
    writeFileSync(join(assets, "index.html"), `<html><head>${PAGE_STYLE}</head><body>${PAGE_SCRIPT}</body></html>`);
    writeFileSync(join(assets, "app.css"), "body { color: #123456 }");
    writeFileSync(join(assets, "app.js"), "window.answer = '$&' + \"$'\";"); // replacement patterns stay as written
    const api = inspectorApiOn({
      backend: openSqliteBackend(harness.databasePath, "private"), config: harness.config, tokens: new DefaultTokenEstimator(), clock: systemClock,
      logger: new RecordingLogger(), readOnlyReason: "the Control UI tab is read-only",
    });
    const handler = createInspectorHandler({ basePath: INSPECTOR_PATH, api: () => api, assetDirectory: assets, inlinePage: true });
    const server = createServer((request, response) => void handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    stops.push(() => new Promise((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const page = async (query: string) => {
      const response = await fetch(`http://127.0.0.1:${port}${INSPECTOR_PATH}/${query}`);
      const text = await response.text();
      const data = /<script type="application\/json" id="lcm-page-data">([^]*?)<\/script>/.exec(text);
      return { response, text, answers: data ? (JSON.parse(data[1]!) as { answers: Record<string, { status: number; body: any }> }).answers : null };
    };
    const apiAnswer = async (path: string) => (await fetch(`http://127.0.0.1:${port}${INSPECTOR_PATH}/api/${path}`)).json();
    return { harness, page, apiAnswer };
  }

  it("puts the style, the script (under a nonce the page's policy names) and the view's API answers inside the page", async () => {
    const { harness, page, apiAnswer } = await inlineRoute();
    const node = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'condensed' LIMIT 1")!.summary_id;
    const { response, text, answers } = await page(`?node=${node}`);
    expect(response.status).toBe(200);
    expect(text).not.toMatch(/src=|href=/); // nothing to read from the frame's opaque origin
    expect(text).toContain("<style>body { color: #123456 }</style>");
    expect(text).toContain("window.answer = '$&' + \"$'\";");
    const nonce = /<script nonce="([^"]+)">/.exec(text)![1]!;
    expect(response.headers.get("content-security-policy")).toContain(`script-src 'nonce-${nonce}'`);
    expect((await page(`?node=${node}`)).text).not.toContain(nonce); // a new nonce for each page
    expect(Object.keys(answers!)).toEqual(["overview", "conversations/1/dag", `summaries/${node}`]);
    expect(answers![`summaries/${node}`]).toEqual({ status: 200, body: await apiAnswer(`summaries/${node}`) });
    expect(answers!["conversations/1/dag"]!.body).toEqual(await apiAnswer("conversations/1/dag"));
  });

  it("answers each view's reads (context, files, a search, repairs), and a missing node as the API's error", async () => {
    const { page } = await inlineRoute();
    expect(Object.keys((await page("?tab=context&c=1")).answers!)).toEqual(["overview", "conversations/1/dag", "conversations/1/context"]);
    expect(Object.keys((await page("?tab=files")).answers!)).toEqual(["overview", "conversations/1/dag", "conversations/1/files"]);
    expect(Object.keys((await page("?tab=repairs")).answers!)).toEqual(["overview", "conversations/1/dag", "repairs?conversation=1"]);
    const search = (await page("?tab=search&q=markert12&scope=messages")).answers!;
    expect(search["search?q=markert12&mode=full_text&scope=messages"]).toMatchObject({ status: 200, body: { matches: expect.any(Array) } });
    expect(search["search?q=markert12&mode=full_text&scope=messages"]!.body.matches.length).toBeGreaterThan(0);
    expect((await page("?node=sum_0000000000000000")).answers!["summaries/sum_0000000000000000"]).toMatchObject({ status: 404 });
    // What a link cannot name is left out, not passed on: a malformed node, an unknown tab.
    expect(Object.keys((await page("?node=%3Cscript%3E&tab=nope")).answers!)).toEqual(["overview", "conversations/1/dag"]);
  });

  it("cannot be ended early by what the database holds: every < in the data is escaped", async () => {
    const { harness, page } = await inlineRoute();
    const node = harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'leaf' LIMIT 1")!.summary_id;
    const hostile = "</script><script>window.owned = 1</script><!-- \u2028";
    harness.db.run("UPDATE summaries SET content = ? WHERE summary_id = ?", hostile, node);
    const { text, answers } = await page(`?node=${node}`);
    expect(text.match(/<\/script>/g)).toHaveLength(2); // the data's element and the script's, nothing else
    expect(answers![`summaries/${node}`]!.body.content).toBe(hostile);
  });
});

describe("lcm inspect's server", () => {
  async function start(write: boolean): Promise<RunningInspector & { harness: Awaited<ReturnType<typeof fallbackDatabase>> }> {
    const harness = await fallbackDatabase();
    const api = inspectorApiOn({
      backend: openSqliteBackend(harness.databasePath, "private"), config: harness.config, tokens: new DefaultTokenEstimator(), clock: systemClock,
      logger: new RecordingLogger(), readOnlyReason: write ? null : "started without --write", model: recordingModel(),
    });
    const server = await startInspectorServer({ api });
    stops.push(() => server.close());
    return { ...server, harness };
  }

  it("answers only requests addressed to its loopback host, and repairs only with the page's header", async () => {
    const server = await start(true);
    expect((await send(server.port, "/api/overview", { host: "evil.example:80" })).status).toBe(421);
    const summaryId = server.harness.db.get<{ summary_id: string }>("SELECT summary_id FROM summaries WHERE kind = 'leaf' LIMIT 1")!.summary_id;
    const body = JSON.stringify({ kind: "rewrite", summaryId, content: "Rewritten from the inspector." });
    expect((await send(server.port, "/api/repairs/propose", { method: "POST", body })).status).toBe(403);
    const proposed = await send(server.port, "/api/repairs/propose", { method: "POST", headers: { "x-lcm-inspector": "1" }, body });
    expect(proposed.status).toBe(200);
    const { proposalId, proposal } = JSON.parse(proposed.body);
    expect(proposal).toMatchObject({ kind: "rewrite", new: { content: "Rewritten from the inspector.", writtenBy: "hand" } });
    const applied = await send(server.port, `/api/repairs/${proposalId}/apply`, { method: "POST", headers: { "x-lcm-inspector": "1" } });
    expect(JSON.parse(applied.body).outcome).toMatchObject({ repairId: 1, findings: { after: 0 } });
    expect((await send(server.port, `/api/repairs/${proposalId}/apply`, { method: "POST", headers: { "x-lcm-inspector": "1" } })).status).toBe(404);
    expect(server.harness.db.get("SELECT content FROM summaries WHERE summary_id = ?", summaryId)).toEqual({ content: "Rewritten from the inspector." });
  });

  it("searches and reads the context through the same engines as the CLI", async () => {
    const server = await start(false);
    const search = JSON.parse((await send(server.port, "/api/search?q=markert12&mode=full_text")).body);
    expect(search.matches.length).toBeGreaterThan(0);
    const context = JSON.parse((await send(server.port, "/api/conversations/1/context")).body);
    // Summaries, messages, and the memory floor when the budget leaves older history out (spec 023).
    const floors = context.items.filter((item: { kind: string }) => item.kind === "floor").length;
    expect(floors).toBe(context.totals.floorTokens > 0 ? 1 : 0);
    expect(context.items.length).toBe(context.totals.summaryCount + context.totals.rawMessageCount + floors);
    expect((await send(server.port, "/api/conversations/9/dag")).status).toBe(404);
    expect((await send(server.port, "/api/search?q=")).status).toBe(400);
  });
});
