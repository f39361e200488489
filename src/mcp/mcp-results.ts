/**
 * From a tool's result to MCP's: the text the model reads as `content`, the agent tool's `details` as
 * `structuredContent` (the same fields, as data), and `isError` for a failed call, which MCP reports as a result the
 * model can read and act on (a bad argument, an unknown id), not as a protocol error. Every text stays within the
 * server's result limit: the tools size their results to it, and a text still longer is cut here, saying so.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult } from "../tools/tool-result.js";

export function toCallToolResult(result: ToolResult, maxChars: number): CallToolResult {
  const details = result.details;
  return {
    content: result.content.map((part) => ({ type: "text" as const, text: withinChars(part.text, maxChars) })),
    ...(details !== null && typeof details === "object" && !Array.isArray(details) ? { structuredContent: details as Record<string, unknown> } : {}),
    ...(result.isError ? { isError: true } : {}),
  };
}

/** `text`, or its start with a closing line saying it was cut, within `maxChars` characters. */
export function withinChars(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const marker = `\n…[cut at ${maxChars} characters, the server's result limit: ask for less (a smaller limit, tokenCap or page), or start lcm mcp with a larger --max-result-chars]`;
  let end = Math.max(0, maxChars - marker.length);
  // Never split a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--;
  return text.slice(0, end) + marker;
}
