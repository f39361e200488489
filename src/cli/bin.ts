#!/usr/bin/env node
/**
 * The `lcm` executable: the operator's CLI over an LCM database file, with or without a gateway running. It first
 * checks that this Node can run LCM (node:sqlite) and answers `--version` on any Node; only then does it load the
 * command tree (standalone.ts), so an older Node gets a message saying what to run instead of a stack trace. The
 * same commands run as `openclaw lcm …` through the plugin's CLI registration (cli/openclaw-cli.ts).
 */
import { EXIT } from "./exit-codes.js";
import { onBrokenPipe, packageVersion, sqliteProblem, unsupportedNodeMessage } from "./node-support.js";

// `lcm … | head`: once the reader has gone, stop quietly with the command's own exit code.
const stopQuietly = () => process.exit(Number(process.exitCode ?? EXIT.ok));
onBrokenPipe(process.stdout, stopQuietly);
onBrokenPipe(process.stderr, stopQuietly);

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  process.stdout.write(`${packageVersion()}\n`);
} else {
  const problem = await sqliteProblem();
  if (problem) {
    process.stderr.write(`lcm: ${unsupportedNodeMessage(problem)}\n`);
    process.exitCode = EXIT.unavailable;
  } else {
    const { runStandalone } = await import("./standalone.js");
    await runStandalone(process.argv);
  }
}
