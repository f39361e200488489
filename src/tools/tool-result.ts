/**
 * Tool results. The model reads only `content`, so every field a tool documents appears in the text; `details`
 * carries the same data structured for hosts and tests. Failures become an error result shaped like the one
 * OpenClaw builds for a throwing tool (`status: "error"`), but without an error-level log line for what is
 * usually a fixable argument; only unexpected failures are logged as errors.
 */
import type { Logger } from "../contracts.js";
import { describeError, isLcmError } from "../errors.js";

export interface ToolResult {
  content: { type: "text"; text: string }[];
  details: unknown;
  isError?: boolean;
}

export function textResult(text: string, details: unknown): ToolResult {
  return { content: [{ type: "text", text }], details };
}

/** JSON with one array element per line: compact for the model, still readable. */
export function formatJson(value: Record<string, unknown>): string {
  const lines = Object.entries(value)
    .filter(([, field]) => field !== undefined)
    .map(([key, field]) => {
      if (Array.isArray(field) && field.some((item) => item !== null && typeof item === "object")) {
        const items = field.map((item) => `    ${JSON.stringify(item)}`).join(",\n");
        return `  ${JSON.stringify(key)}: [\n${items}\n  ]`;
      }
      return `  ${JSON.stringify(key)}: ${JSON.stringify(field)}`;
    });
  return `{\n${lines.join(",\n")}\n}`;
}

/**
 * Runs a tool body: expected failures (LcmError) become an error result naming the problem; an abort is
 * rethrown for the host to handle; anything else is logged and reported without internals. Contract: rejects
 * only for an abort; whatever the body throws (even a value whose every property access throws) is described
 * with describeError and isLcmError, which never throw.
 */
export async function runTool(toolName: string, logger: Logger, signal: AbortSignal | undefined, body: () => Promise<ToolResult>): Promise<ToolResult> {
  try {
    return await body();
  } catch (error) {
    if (isAborted(signal)) throw error;
    if (!isLcmError(error)) logger.error(`${toolName} failed unexpectedly: ${describeError(error)}`);
    const message = isLcmError(error) ? error.message : `${toolName} failed: ${describeError(error)}`;
    const parameter = isLcmError(error) && typeof error.details?.parameter === "string" ? error.details.parameter : undefined;
    const code = isLcmError(error) ? error.code : "internal";
    return {
      content: [{ type: "text", text: `${toolName} error: ${message}` }],
      details: { status: "error", tool: toolName, error: message, code, ...(parameter ? { parameter } : {}) },
      isError: true,
    };
  }
}

/** Whether the host aborted the call; a signal that cannot be read counts as not aborted (the error is reported). */
function isAborted(signal: AbortSignal | undefined): boolean {
  try {
    return signal?.aborted === true;
  } catch {
    // Not a real AbortSignal (a getter threw): report the failure as a result instead of rethrowing it.
    return false;
  }
}
