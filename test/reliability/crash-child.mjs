// A child process for the crash and concurrency suites: drives the BUILT plugin (dist/) through register(api)
// and the engine hooks, and acknowledges each completed operation on stdout with a synchronous write, so the
// parent knows exactly what was acknowledged when it kills this process with SIGKILL at a random moment.
//   node crash-child.mjs <databasePath | postgres://…> <sessionId> <firstTurn> <lastTurn> <mode> [filesDirectory]
// mode: commit (commitTurn per turn) | ingest (ingestBatch per turn) | mixed (alternating, with replays)
import { writeSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import plugin from "../../dist/index.js";

const [databasePath, sessionId, firstArg, lastArg, mode = "commit", filesDirectory] = process.argv.slice(2);
const first = Number(firstArg);
const last = Number(lastArg);
// Measured from the first acknowledged turn on: opening and migrating the file is start-up, not a turn.
const delay = monitorEventLoopDelay({ resolution: 5 });

// Every error the plugin logs counts as a failure of the run (an unavailable engine, a failed hook), and so does
// a warning that says something failed; each is also echoed on stdout for the parent's report.
const errors = [];
const noteError = (line) => {
  errors.push(line);
  writeSync(1, `ERROR ${String(line).replace(/\n/g, " ")}\n`);
};
const api = {
  id: "lcm", registrationMode: "full",
  pluginConfig: {
    ...(databasePath.startsWith("postgres") ? { databaseUrl: databasePath } : { databasePath }), ...(filesDirectory ? { filesDirectory } : {}),
    freshTailCount: 4, leafChunkTokens: 400, leafMinFanout: 4, largeFileTokenThreshold: 300,
  },
  logger: { info: () => {}, warn: (line) => /failed/.test(line) && noteError(line), error: noteError, debug: () => {} },
  runtime: { llm: { complete: async (params) => ({ text: `summary of ${params.messages.at(-1)?.content.length ?? 0} chars` }) } },
  registerContextEngine(id, factory) { this.factory = factory; },
  registerTool() {}, registerCommand() {},
};
plugin.register(api);

/** Every fifth turn pastes a file large enough to be stored aside (largeFileTokenThreshold is 300 here). */
function attachment(turn) {
  const rows = Array.from({ length: 120 }, (_, row) => `${row},item-${turn}-${row},${(row * 7) % 13}`).join("\n");
  return `\n<file name="table-${turn}.csv" mime="text/csv">\nid,name,score\n${rows}\n</file>`;
}

export function turnMessages(turn) {
  const base = Date.UTC(2026, 0, 1) + turn * 10_000;
  return [
    { role: "user", content: `turn-${turn}-user question number ${turn}${turn % 5 === 0 ? attachment(turn) : ""}`, timestamp: base, idempotencyKey: `run-${turn}:user` },
    { role: "assistant", content: [{ type: "toolCall", id: `call_${turn}`, name: "grep", arguments: { q: `q${turn}` } }],
      api: "x", provider: "p", model: "m", usage: {}, stopReason: "toolUse", timestamp: base + 1 },
    { role: "toolResult", toolCallId: `call_${turn}`, toolName: "grep", content: [{ type: "text", text: `turn-${turn}-result ${"data ".repeat(20)}` }],
      isError: false, timestamp: base + 2 },
    { role: "assistant", content: [{ type: "text", text: `turn-${turn}-answer done` }], api: "x", provider: "p", model: "m",
      usage: {}, stopReason: "stop", timestamp: base + 3 },
  ];
}

const ack = (text) => writeSync(1, `${text}\n`);
ack("READY");
// A host serves other work between hooks; yielding here makes the delay monitor see each hook's own blocking.
const yieldToLoop = () => new Promise((resolve) => setImmediate(resolve));
for (let turn = first; turn <= last; turn++) {
  const engine = api.factory({});
  const messages = turnMessages(turn);
  const useCommit = mode === "commit" || (mode === "mixed" && turn % 2 === 0);
  if (useCommit) await engine.commitTurn({ sessionId, sessionKey: `agent:main:${sessionId}`, advancementKey: `turn-${turn}`, messages });
  else await engine.ingestBatch({ sessionId, sessionKey: `agent:main:${sessionId}`, messages });
  await yieldToLoop();
  await engine.maintain({ sessionId, sessionKey: `agent:main:${sessionId}`, sessionFile: "", runtimeContext: { llm: api.runtime.llm } });
  await engine.dispose();
  ack(`ACK ${turn}`);
  await yieldToLoop();
  if (turn === first) delay.enable();
}
delay.disable();
ack(`DONE maxEventLoopDelayMs=${(delay.max / 1e6).toFixed(1)} p99EventLoopDelayMs=${(delay.percentile(99) / 1e6).toFixed(1)} errors=${errors.length}`);
