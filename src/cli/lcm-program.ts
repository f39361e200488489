/**
 * The `lcm` command tree (commander), defined once for both ways it runs: the standalone `lcm` bin (bin.ts) and
 * `openclaw lcm …`, where OpenClaw hands its own commander program to the plugin's CLI registrar. Every command has
 * --help, takes --db, --config and --json, and runs through runCommand (cli-runtime.ts): output on stdout, notes
 * and progress on stderr, an exit code from exit-codes.ts. A command's module is imported when it runs, so
 * `lcm status` loads what status needs (`openclaw lcm` copies every module it loads into its plugin capture).
 */
import type { Command } from "commander";
import { importCommandGroup } from "./commands/import-command.js";
import { defineMigrateCommands } from "./commands/migrate-command.js";
import { defineRepairCommands } from "./commands/repair-commands.js";
import { DEFAULT_MAX_RESULT_CHARS, type McpCommandOptions } from "../mcp/mcp-settings.js";
import { type CliEnvironment, type CommonOptions, runCommand } from "./cli-runtime.js";
import { CliError, EXIT } from "./exit-codes.js";
import { positiveInteger } from "./format.js";
import { packageVersion } from "./node-support.js";

const EXIT_CODES_HELP = `
Exit codes:
  0  done                          4  no LCM database at the path
  1  unexpected failure            5  not LCM's file (left untouched)
  2  bad usage                     6  database unavailable (unreadable, read-only, locked)
  3  not found                     7  doctor: problems remain
                                   8  invalid configuration

lcm export writes a file; lcm import <source> is a dry run unless --apply (import openclaw exits 1 when a session
failed: run it again to retry it, what was stored stays).

The database: --db, else LCM_DATABASE_PATH, else plugins.entries.lcm.config.databasePath in openclaw.json,
else the plugin's default (~/.openclaw/lcm-context.db). PostgreSQL instead: --database-url, else LCM_DATABASE_URL,
else plugins.entries.lcm.config.databaseUrl (--db names a file and wins over both).`;

/** Adds the `lcm` subcommands to `lcm` (a Command named lcm: the bin's program, or the one made under openclaw). */
export function defineLcmCommands(lcm: Command, environment: CliEnvironment): Command {
  lcm.description("Inspect, maintain, export and import the LCM (lossless context) database, with or without a gateway running.")
    .version(packageVersion(), "-V, --version", "print the plugin's version")
    .addHelpText("after", EXIT_CODES_HELP);
  lcm.showHelpAfterError("(lcm --help lists the commands; lcm <command> --help explains one)");
  const run = <T>(name: string, options: CommonOptions, body: Parameters<typeof runCommand<T>>[3]) => runCommand(environment, name, options, body);
  const command = (name: string, description: string): Command =>
    lcm.command(name).description(description)
      .option("--db <path>", "the database file (default: LCM_DATABASE_PATH, openclaw.json, ~/.openclaw/lcm-context.db)")
      .option("--database-url <url>", "PostgreSQL (postgres://…) instead of a file (default: LCM_DATABASE_URL, openclaw.json's databaseUrl)")
      .option("--config <path>", "the openclaw.json to read plugins.entries.lcm.config from")
      .option("--json", "print one JSON document instead of text");

  command("status", "What is stored and the database's health; with a conversation, what /lcm status shows for it")
    .argument("[conversation]", "a conversation id (see lcm conversations)")
    .action((conversation: string | undefined, options: CommonOptions) =>
      run("status", options, async (runtime) => (await import("./commands/status-command.js")).statusCommand(
        runtime, conversation === undefined ? undefined : positiveInteger(conversation, "conversation"))));

  command("conversations", "Every conversation: agent, session, counts, tokens, last activity, flags")
    .option("--agent <id>", "only this agent's conversations")
    .option("--limit <n>", "most conversations listed", "100")
    .action((options: CommonOptions & { agent?: string; limit: string }) =>
      run("conversations", options, async (runtime) => (await import("./commands/conversations-command.js")).conversationsCommand(
        runtime, { ...(options.agent ? { agent: options.agent } : {}), limit: positiveInteger(options.limit, "--limit") })));

  command("context", "Exactly what the model would see next for a conversation, with a token breakdown")
    .argument("<conversation>", "a conversation id")
    .option("--full", "print every message whole (default: one line each)")
    .action((conversation: string, options: CommonOptions & { full?: boolean }) =>
      run("context", options, async (runtime) => (await import("./commands/context-command.js")).contextCommand(
        runtime, positiveInteger(conversation, "conversation"), { full: options.full === true })));

  command("dag", "The summary DAG of a conversation as a tree")
    .argument("<conversation>", "a conversation id")
    .action((conversation: string, options: CommonOptions) =>
      run("dag", options, async (runtime) => (await import("./commands/dag-command.js")).dagCommand(
        runtime, positiveInteger(conversation, "conversation"))));

  command("grep", "Search all stored history (the lcm_grep engine): messages, summaries, or stored files")
    .argument("<pattern>", "a regular expression (default) or words (--mode full_text)")
    .option("--mode <mode>", "regex or full_text", "regex")
    .option("--scope <scope>", "both (messages with the content stored aside from them, and summaries), messages, summaries or files", "both")
    .option("--conversation <id>", "only this conversation")
    .option("--agent <id>", "only this agent's conversations")
    .option("--since <time>", "only after this ISO 8601 time")
    .option("--before <time>", "only before this ISO 8601 time")
    .option("--sort <sort>", "recency or relevance (full_text)", "recency")
    .option("--limit <n>", "most matches", "50")
    .action((pattern: string, options: CommonOptions & Record<string, string | undefined>) =>
      run("grep", options, async (runtime) => (await import("./commands/recall-commands.js")).grepCommand(runtime, pattern, {
        mode: choice(options.mode!, ["regex", "full_text"], "--mode"),
        scope: choice(options.scope!, ["messages", "summaries", "both", "files"], "--scope"),
        sort: choice(options.sort!, ["recency", "relevance"], "--sort"),
        limit: positiveInteger(options.limit!, "--limit"),
        ...(options.conversation !== undefined ? { conversation: positiveInteger(options.conversation, "--conversation") } : {}),
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
        ...(options.since !== undefined ? { since: options.since } : {}),
        ...(options.before !== undefined ? { before: options.before } : {}),
      })));

  command("describe", "One summary (sum_…) or stored file (file_…) by id (the lcm_describe engine)")
    .argument("<id>", "a summary or file id")
    .option("--conversation <id>", "the conversation it must belong to")
    .option("--start-line <n>", "files: first line of the page")
    .option("--max-lines <n>", "files: lines per page")
    .option("--offset <n>", "files: byte offset of the page")
    .option("--max-bytes <n>", "files: bytes per page")
    .action((id: string, options: CommonOptions & Record<string, string | undefined>) =>
      run("describe", options, async (runtime) => (await import("./commands/describe-command.js")).describeCommand(runtime, id, {
        ...(options.conversation !== undefined ? { conversation: positiveInteger(options.conversation, "--conversation") } : {}),
        ...(options.startLine !== undefined ? { startLine: positiveInteger(options.startLine, "--start-line") } : {}),
        ...(options.maxLines !== undefined ? { maxLines: positiveInteger(options.maxLines, "--max-lines") } : {}),
        ...(options.offset !== undefined ? { offset: options.offset === "0" ? 0 : positiveInteger(options.offset, "--offset") } : {}),
        ...(options.maxBytes !== undefined ? { maxBytes: positiveInteger(options.maxBytes, "--max-bytes") } : {}),
      })));

  command("expand", "Walk down the DAG from a summary to its sources (the lcm_expand engine), or answer --prompt (lcm_expand_query)")
    .argument("<summaryId>", "a summary id")
    .option("--depth <n>", "levels below the summary", "1")
    .option("--no-messages", "leave out the original messages under leaf summaries")
    .option("--token-cap <n>", "most tokens returned")
    .option("--prompt <question>", "answer this question from the detail under the summary (one model call when a model is configured, else excerpts)")
    .option("--max-tokens <n>", "longest answer with --prompt", "2000")
    .action((summaryId: string, options: CommonOptions & { depth: string; messages: boolean; tokenCap?: string; prompt?: string; maxTokens: string }) =>
      run("expand", options, async (runtime) => (await import("./commands/recall-commands.js")).expandCommand(runtime, summaryId, {
        depth: positiveInteger(options.depth, "--depth"),
        messages: options.messages,
        maxTokens: positiveInteger(options.maxTokens, "--max-tokens"),
        ...(options.tokenCap !== undefined ? { tokenCap: positiveInteger(options.tokenCap, "--token-cap") } : {}),
        ...(options.prompt !== undefined ? { prompt: options.prompt } : {}),
      })));

  command("doctor", "Check the stored history against every invariant; --repair applies the safe repairs")
    .option("--conversation <id>", "only this conversation (default: all)")
    .option("--repair", "apply the repairs that cannot lose anything (recount, re-index, times)")
    .action((options: CommonOptions & { conversation?: string; repair?: boolean }) =>
      run("doctor", options, async (runtime) => (await import("./commands/doctor-command.js")).doctorCommand(runtime, {
        repair: options.repair === true,
        ...(options.conversation !== undefined ? { conversation: positiveInteger(options.conversation, "--conversation") } : {}),
      })));

  command("compact", "Compact a conversation now, as /compact does (with a model when one is configured, else deterministic summaries)")
    .argument("<conversation>", "a conversation id")
    .option("--instructions <text>", "what the summaries should keep")
    .option("--budget", "compact until the context fits the budget (default: down to contextThreshold of it)")
    .action((conversation: string, options: CommonOptions & { instructions?: string; budget?: boolean }) =>
      run("compact", options, async (runtime) => (await import("./commands/compact-command.js")).compactCommand(
        runtime, positiveInteger(conversation, "conversation"), {
        budget: options.budget === true, ...(options.instructions ? { instructions: options.instructions } : {}),
      })));

  command("backup", "An online, consistent copy of the database (safe while a gateway writes to it)")
    .argument("<path>", "the file to write")
    .option("--force", "replace the file if it exists")
    .action((path: string, options: CommonOptions & { force?: boolean }) =>
      run("backup", options, async (runtime) => (await import("./commands/backup-command.js")).backupCommand(
        runtime, path, { force: options.force === true })));

  command("export", "Write conversations to a file: lossless JSONL (lcm import jsonl restores it) or Markdown to read")
    .argument("[conversation]", "a conversation id (or --agent for all of an agent's)")
    .option("--agent <id>", "every conversation of this agent, archived ones included")
    .requiredOption("--format <format>", "required: jsonl or markdown")
    .requiredOption("--out <path>", "required: the file to write")
    .option("--force", "replace the file if it exists (never the database itself)")
    .option("--allow-missing-files", "export stored files that cannot be read without their content (the export is then not lossless)")
    .action((conversation: string | undefined, options: CommonOptions & { agent?: string; format: string; out: string; force?: boolean; allowMissingFiles?: boolean }) =>
      run("export", options, async (runtime) => (await import("./commands/export-command.js")).exportCommand(runtime, {
        ...(conversation !== undefined ? { conversation: positiveInteger(conversation, "conversation") } : {}),
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
      }, {
        format: choice(options.format, ["jsonl", "markdown"], "--format"), out: options.out, force: options.force === true,
        allowMissingFiles: options.allowMissingFiles === true,
      })));

  command("retention", "What the retention settings would archive and remove (dry run); --apply does it")
    .option("--apply", "archive (gzip JSONL) and remove what the policy selects, then give the space back")
    .option("--vacuum", "once, for a file created before incremental vacuum: rewrite it (VACUUM) so freed space can be given back")
    .action((options: CommonOptions & { apply?: boolean; vacuum?: boolean }) =>
      run("retention", options, async (runtime) => (await import("./commands/retention-command.js")).retentionCommand(
        runtime, { apply: options.apply === true, vacuum: options.vacuum === true })));

  lcm.command("mcp").description("Serve the history to MCP clients (Claude Code, Codex, …): recall tools and resources, over stdio or --http")
    .option("--db <path>", "the database file (default: LCM_DATABASE_PATH, openclaw.json, ~/.openclaw/lcm-context.db)")
    .option("--database-url <url>", "PostgreSQL (postgres://…) instead of a file (default: LCM_DATABASE_URL, openclaw.json's databaseUrl)")
    .option("--config <path>", "the openclaw.json to read plugins.entries.lcm.config from")
    .option("--agent <id>", "serve this agent's conversations (repeatable)", (id: string, ids: string[]) => [...ids, id], [] as string[])
    .option("--all-agents", "serve every agent's conversations")
    .option("--max-result-chars <n>", "longest text of one tool result or resource", String(DEFAULT_MAX_RESULT_CHARS))
    .option("--writable", "open the database for writing, so searches index what waits for the full-text index (default: read-only)")
    .option("--http <address>", "serve Streamable HTTP at 127.0.0.1:PORT/mcp instead of stdio (loopback only; bearer token from LCM_MCP_TOKEN)")
    // Imported when used: the MCP SDK is not loaded for the other commands.
    .action(async (options: CommonOptions & McpCommandOptions) => (await import("./commands/mcp-command.js")).runMcpCommand(environment, options));

  defineRepairCommands(lcm, environment);
  defineMigrateCommands(lcm, environment);

  // The import sources (and what they load: the export format's validator, the lossless-claw reader) are defined
  // when `lcm import …` is on its way, so no other command loads them.
  const importGroup = importCommandGroup(lcm);
  let importsDefined = false;
  lcm.hook("preSubcommand", async (_lcm, subcommand) => {
    if (subcommand !== importGroup || importsDefined) return;
    importsDefined = true;
    const [jsonl, openClaw, losslessClaw] = await Promise.all([
      import("./commands/import-jsonl-command.js"), import("./commands/import-openclaw-command.js"),
      import("./commands/import-lossless-claw-command.js"),
    ]);
    jsonl.defineImportJsonlCommand(importGroup, environment);
    openClaw.defineImportOpenClawCommand(importGroup, environment);
    losslessClaw.defineImportLosslessClawCommand(importGroup, environment);
  });

  return lcm;
}

function choice<T extends string>(value: string, choices: readonly T[], option: string): T {
  if (!choices.includes(value as T)) throw new CliError(EXIT.usage, `${option} must be one of ${choices.join(", ")}, got ${JSON.stringify(value)}.`);
  return value as T;
}
