/**
 * `lcm mcp` (and `openclaw lcm mcp`): serves the database to an MCP client until the client goes away (stdio: its
 * end of stdin) or the process is told to stop (SIGINT, SIGTERM). stdout carries only MCP messages; notes go to stderr.
 * The database is opened read-only unless --writable, with a connection that sees what a running gateway commits.
 * A bad option or database ends the command with the CLI's exit codes and a message, before anything is served.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { type CliEnvironment, type CommonOptions, CliRuntime, stopSignal } from "../cli-runtime.js";
import { CliError, EXIT, exitCodeOf } from "../exit-codes.js";
import { describeError } from "../../errors.js";
import { createMcpBackend, type McpBackend } from "../../mcp/mcp-backend.js";
import { listenMcpHttp } from "../../mcp/mcp-http.js";
import { type McpCommandOptions, readMcpSettings, TOKEN_VARIABLE } from "../../mcp/mcp-settings.js";
import { createLcmMcpServer } from "../../mcp/lcm-mcp-server.js";

export async function runMcpCommand(environment: CliEnvironment, options: CommonOptions & McpCommandOptions, stdin: NodeJS.ReadableStream = process.stdin): Promise<void> {
  const runtime = new CliRuntime(environment, options);
  try {
    const settings = readMcpSettings(options, environment.env);
    const stores = runtime.open(settings.writable ? "write" : "read-live");
    const { logger } = runtime;
    const backend = createMcpBackend({
      backend: stores.backend, settings, config: runtime.settings.config, tokens: runtime.tokens, clock: runtime.clock, logger, model: environment.model,
    });
    const served = settings.agentIds === null ? "every agent's conversations" : `the conversations of agent(s) ${settings.agentIds.join(", ")}`;
    const access = stores.readOnly ? "read-only" : "writable (searches may index what waits)";
    await noteAgentsWithoutHistory(backend, settings.agentIds, runtime);
    if (settings.http) {
      const listener = await listenMcpHttp(backend, settings.http);
      runtime.note(settings.http.tokenGenerated
        ? `mcp: bearer token (made up for this run; set ${TOKEN_VARIABLE} to choose one): ${settings.http.token}`
        : `mcp: bearer token from ${TOKEN_VARIABLE}`);
      // Last: the address line tells a supervisor (or a test) that the server is ready.
      runtime.note(`mcp: serving ${served} of ${runtime.databaseLabel} (${access}) at ${listener.url}`);
      await stopSignal();
      await listener.close();
    } else {
      const server = createLcmMcpServer(backend);
      const closed = new Promise<void>((resolve) => {
        server.onclose = resolve;
        stdin.once("end", resolve);
        stdin.once("close", resolve);
      });
      await server.connect(new StdioServerTransport(stdin as NodeJS.ReadStream, environment.stdout));
      runtime.note(`mcp: serving ${served} of ${runtime.databaseLabel} (${access}) over stdio`);
      await Promise.race([closed, stopSignal()]);
      await server.close();
    }
    environment.setExitCode(EXIT.ok);
  } catch (error) {
    const { exitCode } = exitCodeOf(error);
    const message = error instanceof CliError || exitCode !== EXIT.internal ? (error as Error).message : `failed unexpectedly: ${describeError(error)}`;
    environment.stderr.write(`lcm mcp: ${message}\n`);
    environment.setExitCode(exitCode);
  } finally {
    await runtime.close();
  }
}

/** An agent named with --agent that has nothing stored yet is likely a typo; the server still serves it as it grows. */
async function noteAgentsWithoutHistory(backend: McpBackend, agentIds: readonly string[] | null, runtime: CliRuntime): Promise<void> {
  for (const agentId of agentIds ?? []) {
    const listed = await backend.stores.operator.listConversations({ agentId, limit: 1 });
    if (listed.length === 0) runtime.note(`mcp: no conversation of agent ${JSON.stringify(agentId)} is stored yet (lcm conversations lists the agents).`);
  }
}
