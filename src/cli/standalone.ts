/**
 * The standalone `lcm` program (what bin.ts runs once it knows this Node can): the command tree of lcm-program.ts
 * on the process's own streams and environment, with commander's own exits (help, version, usage errors) turned
 * into the CLI's exit codes.
 */
import { Command, CommanderError } from "commander";
import { EXIT } from "./exit-codes.js";
import { defineLcmCommands } from "./lcm-program.js";

export async function runStandalone(argv: string[]): Promise<void> {
  const program = new Command("lcm");
  program.exitOverride();
  program.configureOutput({ writeErr: (text) => process.stderr.write(text) });
  defineLcmCommands(program, {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    setExitCode: (code) => {
      process.exitCode = code;
    },
  });
  try {
    await program.parseAsync(argv);
  } catch (error) {
    // Commander's own exits: help and version are successes; anything else it reports is bad usage.
    process.exitCode = error instanceof CommanderError && error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
}
