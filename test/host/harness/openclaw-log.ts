/**
 * Reads OpenClaw's JSON-lines log (`logging.file`) and the gateway's console output, and picks out the lines
 * that mean the engine did not serve a turn: the host degrading it to "legacy" for a turn, quarantining it for
 * the process, falling back from a failed assemble, or the plugin logging an error.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface LogLine {
  level: string;
  text: string;
  /** When OpenClaw wrote it (epoch ms), for lines of its JSON log. */
  time?: number;
}

const HEALTH_PROBLEMS: readonly RegExp[] = [
  /degraded to "legacy"/,
  /quarantin/i,
  /context engine \w+ failed/i,
  /invalid ContextEngine/i,
];

export function readOpenClawLog(file: string): LogLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown> & { _meta?: { logLevelName?: string; date?: string } };
      const parts = Object.keys(entry).filter((key) => /^\d+$/.test(key)).map((key) => {
        const value = entry[key];
        return typeof value === "string" ? value : JSON.stringify(value);
      });
      const time = Date.parse(String(entry.time ?? entry._meta?.date ?? ""));
      return {
        level: entry._meta?.logLevelName ?? "INFO", text: parts.join(" ") || String(entry.message ?? line),
        ...(Number.isNaN(time) ? {} : { time }),
      };
    } catch {
      return { level: "INFO", text: line }; // a line OpenClaw did not write as JSON: keep it verbatim
    }
  });
}

/** Gateway console output (`gateway-N.out` in the suite folder), as plain lines. */
export function readGatewayOutput(workDir: string): LogLine[] {
  return readdirSync(workDir).filter((name) => /^gateway-\d+\.out$/.test(name)).flatMap((name) =>
    readFileSync(join(workDir, name), "utf8").split("\n").map((text) => ({
      level: /\bERROR\b|\[error\]/i.test(text) ? "ERROR" : "INFO",
      text,
    })),
  );
}

/** Lines showing the engine was bypassed or failed; empty when every turn ran through it. */
export function engineHealthProblems(lines: readonly LogLine[]): string[] {
  return lines
    .filter((line) =>
      HEALTH_PROBLEMS.some((pattern) => pattern.test(line.text)) ||
      (/^(ERROR|FATAL)$/.test(line.level) && line.text.includes("[lcm]")))
    .map((line) => `${line.level} ${line.text}`.slice(0, 500));
}
