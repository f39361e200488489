/**
 * `openclaw lcm …`: the plugin's CLI registration. The registrar runs when OpenClaw needs the command (its
 * descriptor keeps it lazy) and imports the command tree only then, so loading the plugin for a turn never loads
 * the CLI. Commands run in the CLI process against the database file, gateway running or not; the OpenClaw config
 * the host loaded names the database, the host's model (api.runtime.llm) summarizes for `compact`, and the host's
 * transcript reader serves `import openclaw`.
 */
import type { CompletionModel } from "../contracts.js";
import { openClawTranscriptSource } from "../ingest/transcript-source.js";
import type { CliCommandDescriptor, CliRegistrar } from "../host/openclaw-types.js";
import { CLI_COMMANDS } from "../manifest.js";
import { EXIT } from "./exit-codes.js";
import { onBrokenPipe } from "./node-support.js";

/**
 * The root commands with their machine-output rule: with --json, stdout holds only the JSON document; `lcm mcp` over
 * stdio holds only MCP messages there (OpenClaw then sends its own start-up notes to stderr).
 */
export const CLI_DESCRIPTORS: CliCommandDescriptor[] = CLI_COMMANDS.map((command) => ({
  ...command,
  machineOutput: ({ argv }) => argv.includes("--json") || isMcpOverStdio(argv),
}));

/** Whether argv runs `lcm mcp` without --http. Pure and synchronous, as OpenClaw requires of machineOutput. */
export function isMcpOverStdio(argv: readonly string[]): boolean {
  const lcm = argv.indexOf("lcm");
  return lcm >= 0 && argv[lcm + 1] === "mcp" && !argv.some((argument) => argument === "--http" || argument.startsWith("--http="));
}

export function lcmCliRegistrar(model: () => CompletionModel | undefined): CliRegistrar {
  return async ({ program, config }) => {
    const { defineLcmCommands } = await import("./lcm-program.js");
    const root = program as import("commander").Command;
    // `openclaw lcm … | head`: once the reader has gone, stop quietly with the command's own exit code.
    onBrokenPipe(process.stdout, () => process.exit(Number(process.exitCode ?? EXIT.ok)));
    const lcm = root.command("lcm");
    // Commander's own exits (help, a usage error) with the CLI's codes; subcommands made below inherit this.
    lcm.exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.usage));
    defineLcmCommands(lcm, {
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
      hostConfig: config ?? {},
      hostTranscripts: openClawTranscriptSource(),
      get model() {
        return model();
      },
      setExitCode: (code) => {
        process.exitCode = code;
      },
    });
  };
}
