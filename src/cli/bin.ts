#!/usr/bin/env node
/**
 * The `lcm` executable: the operator's CLI over an LCM database file, with or without a gateway running. The same
 * commands run as `openclaw lcm …` through the plugin's CLI registration (cli/openclaw-cli.ts).
 */
import { Command, CommanderError } from "commander";
import { EXIT } from "./exit-codes.js";
import { defineLcmCommands } from "./lcm-program.js";

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
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander's own exits: help and version are successes; anything else it reports is bad usage.
  process.exitCode = error instanceof CommanderError && error.exitCode === 0 ? EXIT.ok : EXIT.usage;
}
