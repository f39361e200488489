/**
 * The `lcm import` command group: bringing history in from elsewhere. Each source is a subcommand defined in its
 * own file (import-lossless-claw-command.ts, …) and added to the group returned here, so sources are added without
 * touching each other. Every subcommand is a dry run unless given --apply.
 */
import type { Command } from "commander";

/** The `import` group under `lcm` (created on first call, the same one afterwards). */
export function importCommandGroup(lcm: Command): Command {
  const existing = lcm.commands.find((command) => command.name() === "import");
  if (existing) return existing;
  return lcm.command("import")
    .description("Bring history in from another store (a dry run unless --apply): lcm import <source> --help")
    .addHelpText("after", `
Every import reports what would come over first; --apply writes it. Imports are idempotent: running one again adds
nothing, and an interrupted one resumes where it stopped.`);
}

/** The options every `lcm` command takes, for subcommands defined outside lcm-program.ts. */
export function withCommonOptions(command: Command): Command {
  return command
    .option("--db <path>", "the database file (default: LCM_DATABASE_PATH, openclaw.json, ~/.openclaw/lcm-context.db)")
    .option("--database-url <url>", "PostgreSQL (postgres://…) instead of a file (default: LCM_DATABASE_URL, openclaw.json's databaseUrl)")
    .option("--config <path>", "the openclaw.json to read plugins.entries.lcm.config from")
    .option("--json", "print one JSON document instead of text");
}
