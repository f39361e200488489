/**
 * The `lcm repair` command group (spec 027) and `lcm inspect`: their options, defined apart from lcm-program.ts so the
 * program file stays one list of commands. Each subcommand takes --db, --config and --json like every command.
 */
import type { Command } from "commander";
import { type CliEnvironment, type CommonOptions, runCommand } from "../cli-runtime.js";
import { CliError, EXIT } from "../exit-codes.js";
import { positiveInteger } from "../format.js";

/** Loaded when a repair command runs (as lcm-program.ts loads each command's module), not by every `lcm` command. */
const repairs = () => import("./repair-command.js");

export function defineRepairCommands(lcm: Command, environment: CliEnvironment): void {
  lcm.command("inspect").description("The web inspector on 127.0.0.1: conversations, the summary DAG, the context, search, files; --write allows repairs")
    .option("--db <path>", "the database file (default: LCM_DATABASE_PATH, openclaw.json, ~/.openclaw/lcm-context.db)")
    .option("--database-url <url>", "PostgreSQL (postgres://…) instead of a file (default: LCM_DATABASE_URL, openclaw.json's databaseUrl)")
    .option("--config <path>", "the openclaw.json to read plugins.entries.lcm.config from")
    .option("--json", "print one JSON document when it stops")
    .option("--port <n>", "the port on 127.0.0.1 (default: a free one)", "0")
    .option("--write", "allow repairs from the page (each one previewed, recorded and undoable)")
    .action((options: CommonOptions & { port: string; write?: boolean }) =>
      runCommand(environment, "inspect", options, async (runtime) =>
        (await import("./inspect-command.js")).inspectCommand(runtime, { port: portOf(options.port), write: options.write === true })));

  const group = lcm.command("repair")
    .description("Repair summaries: re-summarize, rewrite by hand, dissolve into parents; previewed, --apply to write, undo to revert");
  const command = (name: string, description: string): Command =>
    group.command(name).description(description)
      .option("--db <path>", "the database file (default: LCM_DATABASE_PATH, openclaw.json, ~/.openclaw/lcm-context.db)")
      .option("--database-url <url>", "PostgreSQL (postgres://…) instead of a file (default: LCM_DATABASE_URL, openclaw.json's databaseUrl)")
      .option("--config <path>", "the openclaw.json to read plugins.entries.lcm.config from")
      .option("--json", "print one JSON document instead of text");
  const run = <T>(name: string, options: CommonOptions, body: Parameters<typeof runCommand<T>>[3]) =>
    runCommand(environment, `repair ${name}`, options, body);

  command("resummarize", "Summarize a summary's sources again with the model (the host's, or ANTHROPIC_API_KEY + summaryModel)")
    .argument("<summaryId>", "a summary id (sum_…)")
    .option("--instructions <text>", "what the new summary should keep")
    .option("--apply", "write it (default: preview only)")
    .action((summaryId: string, options: CommonOptions & { instructions?: string; apply?: boolean }) =>
      run("resummarize", options, async (runtime) => (await repairs()).repairCommand(runtime, {
        kind: "resummarize", summaryId, ...(options.instructions ? { instructions: options.instructions } : {}),
      }, { apply: options.apply === true })));

  command("rewrite", "Replace a summary's text with your own")
    .argument("<summaryId>", "a summary id (sum_…)")
    .option("--text <text>", "the new text")
    .option("--file <path>", "a file holding the new text")
    .option("--apply", "write it (default: preview only)")
    .action((summaryId: string, options: CommonOptions & { text?: string; file?: string; apply?: boolean }) =>
      run("rewrite", options, async (runtime) => {
        const { repairCommand, rewriteText } = await repairs();
        return repairCommand(runtime, { kind: "rewrite", summaryId, content: rewriteText(options) }, { apply: options.apply === true });
      }));

  command("dissolve", "Put a condensed summary's parents back into the context in its place")
    .argument("<summaryId>", "a condensed summary the context shows (sum_…)")
    .option("--apply", "write it (default: preview only)")
    .action((summaryId: string, options: CommonOptions & { apply?: boolean }) =>
      run("dissolve", options, async (runtime) => (await repairs()).repairCommand(runtime, { kind: "dissolve", summaryId }, { apply: options.apply === true })));

  command("undo", "Restore exactly what a repair replaced (refused if the rows changed since)")
    .argument("<repairId>", "a repair number (see lcm repair list)")
    .action((repairId: string, options: CommonOptions) =>
      run("undo", options, async (runtime) => (await repairs()).undoCommand(runtime, positiveInteger(repairId, "repairId"))));

  command("list", "The repairs made, newest first")
    .option("--conversation <id>", "only this conversation")
    .option("--limit <n>", "most repairs listed", "50")
    .action((options: CommonOptions & { conversation?: string; limit: string }) =>
      run("list", options, async (runtime) => (await repairs()).listRepairsCommand(runtime, {
        limit: positiveInteger(options.limit, "--limit"),
        ...(options.conversation !== undefined ? { conversation: positiveInteger(options.conversation, "--conversation") } : {}),
      })));

  command("fallbacks", "List fallback summaries (truncations written while no model answered); --apply redoes them with the model")
    .option("--conversation <id>", "only this conversation")
    .option("--limit <n>", "most summaries", "20")
    .option("--apply", "re-summarize them (each one recorded and undoable)")
    .action((options: CommonOptions & { conversation?: string; limit: string; apply?: boolean }) =>
      run("fallbacks", options, async (runtime) => (await repairs()).fallbacksCommand(runtime, {
        limit: positiveInteger(options.limit, "--limit"), apply: options.apply === true,
        ...(options.conversation !== undefined ? { conversation: positiveInteger(options.conversation, "--conversation") } : {}),
      })));
}

function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new CliError(EXIT.usage, `--port must be a port number (0-65535; 0 takes a free one), got ${JSON.stringify(value)}.`);
  return port;
}
