/**
 * `lcm <args>` run in the bench's own process, its output discarded: the block scripts time the command's work (an
 * export, a backfill) and watch the event loop around it, without a child process's start-up in the figure.
 */
import { Writable } from "node:stream";
import { Command } from "commander";
import { defineLcmCommands } from "../src/cli/lcm-program.js";

/** Runs `lcm <args>` with HOME at `home`; returns the exit code. */
export async function runLcmInProcess(home: string, args: string[]): Promise<number> {
  const sink = new Writable({ write(_chunk, _encoding, done) { done(); } });
  const program = new Command("lcm").exitOverride();
  let exitCode = 0;
  defineLcmCommands(program, {
    stdout: sink as unknown as NodeJS.WriteStream, stderr: sink as unknown as NodeJS.WriteStream,
    env: { HOME: home }, setExitCode: (code) => { exitCode = code; },
  });
  await program.parseAsync(["node", "lcm", ...args]);
  return exitCode;
}
