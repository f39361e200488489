/**
 * The scripted agent session of the demo: a few hundred turns of an agent maintaining a billing service, with
 * user requests, assistant replies, tool calls and their (sometimes long) results, in OpenClaw's message shapes.
 * Deterministic. Turn 2 plants the detail the demo recalls at the end; turn 3 reads a deploy log far larger than
 * the context window (stored aside as a large file), one line of which mentions the same ticket.
 */

export interface DemoMessage {
  role: string;
  content: unknown;
  timestamp: number;
  [field: string]: unknown;
}

/** The detail planted in turn 2 and looked for after hundreds of turns. */
export const RECALL_DETAIL = "OPS-4471";
/** Lines of the turn-3 deploy log (about 40k tokens), and the line that names RECALL_DETAIL. */
export const DEPLOY_LOG_LINES = 2_400;
export const DEPLOY_LOG_DETAIL_LINE = 1_742;

const START = Date.UTC(2026, 10, 3, 8, 0, 0);
const MODULES = ["ledger", "invoices", "payments", "refunds", "tax", "webhooks", "exports", "auth", "scheduler", "reports"];
const ACTIONS = ["fix the flaky test in", "add retries to", "profile the slow path of", "review the error handling of", "document the config of", "migrate the schema used by"];
const TOOLS = ["read_file", "run_command", "grep", "edit_file"];
const LOG_LINES = [
  "INFO  worker started pid=%n queue=billing-%m",
  "WARN  retrying request attempt=%n backoff_ms=%n",
  "ERROR ERR_%M_TIMEOUT upstream did not answer within %n ms",
  "INFO  processed batch size=%n duration_ms=%n",
  "DEBUG cache hit ratio=0.%n keys=%n",
  "ERROR connection reset by peer while writing /var/lib/billing/%m/segment-%n.dat",
];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), state | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

export function demoSession(turns: number, seed = 42): DemoMessage[][] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const number = () => String(100 + Math.floor(next() * 9_900));
  let clock = START;
  const stamp = () => (clock += 20_000 + Math.floor(next() * 240_000));
  const log = (module: string, lines: number) =>
    Array.from({ length: lines }, () =>
      pick(LOG_LINES).replace(/%n/g, number).replace(/%m/g, module).replace(/%M/g, module.toUpperCase()),
    ).join("\n");

  const session: DemoMessage[][] = [];
  for (let turn = 1; turn <= turns; turn++) {
    const module = pick(MODULES);
    const path = `src/${module}/${pick(["handler", "service", "repository", "worker"])}.ts`;
    const request = turn === 2
      ? `Before anything else: the staging database password was rotated under ticket ${RECALL_DETAIL}; the new secret ` +
        `lives in /etc/billing/secrets/ledger-4471.env. Remember that for the deploy at the end of the week.`
      : `Please ${pick(ACTIONS)} ${path}. Users report ${pick(["timeouts", "double charges", "missing rows", "slow exports"])} since release v3.${turn % 17}.${turn % 5}.`;
    const turnMessages: DemoMessage[] = [{ role: "user", content: request, timestamp: stamp(), idempotencyKey: `demo:${turn}:user` }];
    if (turn !== 2 && next() < 0.8) {
      const calls = Array.from({ length: 1 + Math.floor(next() * 2) }, (_, index) => {
        const name = pick(TOOLS);
        const args = name === "run_command" ? { command: `npm test -- ${path}` } : name === "grep" ? { pattern: `ERR_${module.toUpperCase()}` } : { path };
        return { type: "toolCall", id: `call_${turn}_${index}`, name, arguments: args };
      });
      turnMessages.push(assistant([{ type: "text", text: `Looking at ${path}.` }, ...calls], stamp(), "toolUse"));
      for (const call of calls) {
        turnMessages.push({
          role: "toolResult", toolCallId: call.id, toolName: call.name, isError: false, timestamp: stamp(),
          content: [{ type: "text", text: log(module, 8 + Math.floor(next() * 40)) }],
        });
      }
    }
    if (turn === 3) turnMessages.push(...deployLogCall(stamp));
    const reply = turn === 2
      ? `Noted: ticket ${RECALL_DETAIL}, secret file /etc/billing/secrets/ledger-4471.env. I will use it for the staging deploy.`
      : `Done with ${path}: the cause was ${pick(["a missing await", "an unbounded retry loop", "a stale cache entry", "an off-by-one in paging"])}. ` +
        `Commit ${Math.floor(next() * 0xffffffff).toString(16).padStart(8, "0")} fixes it and adds a regression test; ${number()} tests pass.`;
    turnMessages.push(assistant([{ type: "text", text: reply }], stamp(), "stop"));
    session.push(turnMessages);
  }
  return session;
}

/** The agent reads the staging deploy log: one tool call whose output is far over the large-file threshold. */
function deployLogCall(stamp: () => number): DemoMessage[] {
  const next = random(3);
  const lines = Array.from({ length: DEPLOY_LOG_LINES }, (_, index) => {
    const line = index + 1;
    const time = new Date(Date.UTC(2026, 10, 2, 22, 0, 0) + line * 1_500).toISOString();
    if (line === DEPLOY_LOG_DETAIL_LINE) {
      return `${time} WARN  deploy: db credentials rotated (${RECALL_DETAIL}); reloading /etc/billing/secrets/ledger-4471.env`;
    }
    const module = MODULES[Math.floor(next() * MODULES.length)]!;
    return `${time} INFO  deploy: migrated ${module} shard ${Math.floor(next() * 64)} rows=${Math.floor(next() * 90_000)} ok`;
  });
  const call = { type: "toolCall", id: "call_3_deploy", name: "run_command", arguments: { command: "cat /var/log/billing/staging-deploy.log" } };
  return [
    assistant([{ type: "text", text: "Reading last night's staging deploy log." }, call], stamp(), "toolUse"),
    {
      role: "toolResult", toolCallId: call.id, toolName: call.name, isError: false, timestamp: stamp(),
      content: [{ type: "text", text: lines.join("\n") }],
    },
  ];
}

function assistant(content: unknown[], timestamp: number, stopReason: string): DemoMessage {
  return {
    role: "assistant", content, timestamp, stopReason, api: "anthropic-messages", provider: "demo", model: "demo-model",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
  };
}
