/**
 * What `lcm mcp` serves, from its options: whose histories (explicit: --agent, repeatable, or --all-agents), how long
 * one result may be (--max-result-chars), read-only or --writable, and the transport (stdio, or --http on a loopback
 * address with a bearer token). Every mistake is an LcmError("invalid_input") that says what was expected (the CLI
 * exits with its usage code, cli/exit-codes.ts).
 */
import { randomBytes } from "node:crypto";
import { LcmError } from "../errors.js";

export const DEFAULT_MAX_RESULT_CHARS = 20_000;
/** A result must hold at least one match with its context, or a file page with its metadata. */
export const MIN_MAX_RESULT_CHARS = 2_000;
const MAX_MAX_RESULT_CHARS = 1_000_000;
/** A bearer token shorter than this is refused: it guards private history. */
const MIN_TOKEN_LENGTH = 16;
export const TOKEN_VARIABLE = "LCM_MCP_TOKEN";

export interface McpHttpSettings {
  host: "127.0.0.1" | "localhost" | "::1";
  /** 0: any free port (the address is printed on stderr). */
  port: number;
  token: string;
  /** True when the token was made up here (printed once on stderr) rather than read from LCM_MCP_TOKEN. */
  tokenGenerated: boolean;
}

export interface McpSettings {
  /** The agents whose histories may be read; null: every agent's. */
  agentIds: readonly string[] | null;
  maxResultChars: number;
  /** Open the database for writing: a search may then index messages still waiting for the full-text index. */
  writable: boolean;
  http: McpHttpSettings | null;
}

/** The options commander hands the `mcp` action. */
export interface McpCommandOptions {
  agent?: string[];
  allAgents?: boolean;
  maxResultChars: string;
  writable?: boolean;
  http?: string;
}

export function readMcpSettings(options: McpCommandOptions, env: NodeJS.ProcessEnv): McpSettings {
  const agents = [...new Set((options.agent ?? []).map((agent) => agent.trim()))];
  if (agents.some((agent) => agent === "")) throw usage("--agent needs an agent id, such as --agent main.");
  if (agents.length > 0 && options.allAgents) throw usage("Pass either --agent <id> (repeatable) or --all-agents, not both.");
  if (agents.length === 0 && !options.allAgents) {
    throw usage(
      "Say whose history this server may read: --agent <id> (repeatable, e.g. --agent main) or --all-agents. " +
        "An MCP client reads every conversation of the agents given, and nothing of the others.",
    );
  }
  const maxResultChars = Number(options.maxResultChars);
  if (!Number.isInteger(maxResultChars) || maxResultChars < MIN_MAX_RESULT_CHARS || maxResultChars > MAX_MAX_RESULT_CHARS) {
    throw usage(`--max-result-chars must be an integer from ${MIN_MAX_RESULT_CHARS} to ${MAX_MAX_RESULT_CHARS}, got ${JSON.stringify(options.maxResultChars)}.`);
  }
  return {
    agentIds: options.allAgents ? null : agents,
    maxResultChars,
    writable: options.writable === true,
    http: options.http === undefined ? null : httpSettings(options.http, env),
  };
}

function httpSettings(address: string, env: NodeJS.ProcessEnv): McpHttpSettings {
  const { host, port } = loopbackAddress(address);
  const given = env[TOKEN_VARIABLE]?.trim();
  if (given !== undefined && given !== "" && given.length < MIN_TOKEN_LENGTH) {
    throw usage(`${TOKEN_VARIABLE} must be at least ${MIN_TOKEN_LENGTH} characters long (it guards the history); unset it to have one made up.`);
  }
  return given ? { host, port, token: given, tokenGenerated: false } : { host, port, token: randomBytes(24).toString("base64url"), tokenGenerated: true };
}

/** `127.0.0.1:PORT`, `localhost:PORT`, `[::1]:PORT` or a bare `PORT` (127.0.0.1); anything else is refused. */
function loopbackAddress(address: string): { host: McpHttpSettings["host"]; port: number } {
  const match = /^(?:(127\.0\.0\.1|localhost|\[::1\]):)?(\d{1,5})$/.exec(address.trim());
  const port = match ? Number(match[2]) : Number.NaN;
  if (!match || port > 65_535) {
    throw usage(
      `--http must be a loopback address and port, such as 127.0.0.1:8765 (or localhost:PORT, [::1]:PORT), got ${JSON.stringify(address)}: ` +
        "the server reads private history, so it never listens on a network.",
    );
  }
  const host = match[1] === "[::1]" ? "::1" : (match[1] ?? "127.0.0.1") as "127.0.0.1" | "localhost";
  return { host, port };
}

function usage(message: string): LcmError {
  return new LcmError("invalid_input", message);
}
