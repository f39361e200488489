/**
 * `lcm inspect`: the web inspector for a database (spec 027), served on 127.0.0.1 until Ctrl-C, with or without a
 * gateway running. Read-only unless --write (then repairs can be previewed and applied from the page, each undoable).
 * The address is printed on stderr as soon as it listens.
 */
import { inspectorApiOn } from "../../inspector/inspector-wiring.js";
import { startInspectorServer } from "../../inspector/inspector-server.js";
import { type CliRuntime, type CommandOutput, stopSignal } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";

export interface InspectOutput {
  url: string;
  databasePath: string;
  write: boolean;
}

export async function inspectCommand(runtime: CliRuntime, options: { port: number; write: boolean }): Promise<CommandOutput<InspectOutput>> {
  const { config } = runtime.settings;
  const stores = runtime.open(options.write ? "write" : "read");
  const { logger } = runtime;
  const api = inspectorApiOn({
    backend: stores.backend, config, tokens: runtime.tokens, clock: runtime.clock, logger,
    readOnlyReason: options.write ? null : "started without --write", model: runtime.environment.model, env: runtime.environment.env,
  });
  let server;
  try {
    server = await startInspectorServer({ api, port: options.port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE" || code === "EACCES") {
      throw new CliError(EXIT.usage, `Port ${options.port} cannot be used on 127.0.0.1 (${code}); leave --port out to take a free one.`);
    }
    throw error;
  }
  runtime.note(`inspector for ${stores.backend.location} at ${server.url} (${options.write ? "repairs allowed" : "read-only; --write allows repairs"}); Ctrl-C stops it`);
  await stopSignal();
  await server.close();
  return { data: { url: server.url, databasePath: stores.backend.location, write: options.write }, text: "The inspector stopped." };
}
