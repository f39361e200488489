/**
 * A long-lived client of a running gateway for the host suite: OpenClaw's own `callGatewayFromCli` (what `openclaw
 * agent` and `openclaw gateway call` use), in one process for many calls, so a scripted turn does not pay a CLI
 * start (about 2.5 of its 3-5 s). Run with the suite's environment (HOME, OPENCLAW_GATEWAY_TOKEN):
 *   node gateway-rpc-helper.mjs <openclaw package dir> <port file>
 * It listens on 127.0.0.1 (a free port, written to the port file) for POST / with {method, params, timeoutMs,
 * expectFinal}, and answers {ok: true, result} or {ok: false, error}. `expectFinal` (default true, what `openclaw agent`
 * asks) waits for a run's final answer; false answers with the first response, as `openclaw gateway call` does.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, portFile] = process.argv.slice(2);
const { callGatewayFromCli } = await import(pathToFileURL(join(packageDir, "dist", "plugin-sdk", "gateway-runtime.js")).href);

const server = createServer((request, response) => {
  let body = "";
  request.on("data", (chunk) => { body += chunk; });
  request.on("end", async () => {
    let answer;
    try {
      const { method, params, timeoutMs = 150_000, expectFinal = true } = JSON.parse(body);
      const result = await callGatewayFromCli(method, { timeout: String(timeoutMs), expectFinal, json: true }, params,
        { expectFinal, progress: false, clientName: "cli", mode: "cli", scopes: ["operator.admin"] });
      answer = { ok: true, result };
    } catch (error) {
      answer = { ok: false, error: error instanceof Error ? `${error.message}\n${error.stack ?? ""}` : String(error) };
    }
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(answer));
  });
});
server.listen(0, "127.0.0.1", () => writeFileSync(portFile, String(server.address().port)));
