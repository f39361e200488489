/**
 * The MCP server over one backend, on the official SDK's `Server`. Its lower-level handlers take JSON Schema as it is,
 * so the tools are listed with the agent tools' own TypeBox schemas (McpServer.registerTool wants zod schemas, which
 * would be second copies to keep in step). A call runs the tool through runTool, as the agent tools do: a bad argument
 * or an unknown id is an error result naming the problem (`isError`), an unknown tool or resource an MCP error, and
 * nothing a call does can end the process. One server per connection; the backend is shared.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describeError, isLcmError } from "../errors.js";
import { PLUGIN_VERSION } from "../manifest.js";
import { runTool } from "../tools/tool-result.js";
import type { McpBackend } from "./mcp-backend.js";
import { listResources, readResource, RESOURCE_TEMPLATES } from "./mcp-resources.js";
import { toCallToolResult } from "./mcp-results.js";
import { MCP_TOOLS } from "./mcp-tools.js";

/** MCP's "resource not found" error code (the specification's, not in the SDK's enum). */
const RESOURCE_NOT_FOUND = -32002;

const INSTRUCTIONS = [
  "LCM keeps every message of OpenClaw conversations, and summaries of older turns. To recall a detail: lcm_grep first",
  "(words, identifiers, errors; a hit names the summary covering it), then lcm_describe to read a summary or stored file,",
  "lcm_expand to open a summary down to its original messages, or lcm_expand_query to ask a question of them.",
  "lcm_conversations lists the conversations served; every tool reads all of them unless given conversationId.",
].join(" ");

export function createLcmMcpServer(backend: McpBackend): Server {
  const server = new Server(
    { name: "lcm", title: "LCM: OpenClaw conversation history", version: PLUGIN_VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
  );

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.inputSchema,
      annotations: { title: tool.title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = MCP_TOOLS.find((candidate) => candidate.name === request.params.name);
    if (!tool) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(request.params.name)}; this server offers ${MCP_TOOLS.map((known) => known.name).join(", ")}.`);
    }
    const result = await runTool(tool.name, backend.logger, extra.signal, () => tool.run(backend, request.params.arguments ?? {}, extra.signal));
    return toCallToolResult(result, backend.reader.maxResultChars);
  });

  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: await listResources(backend) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    try {
      return { contents: [{ uri, mimeType: "text/plain", text: await readResource(backend, uri) }] };
    } catch (error) {
      throw resourceError(error, backend);
    }
  });
  return server;
}

/** An MCP error for a failed resource read: not found, invalid, or (logged) unexpected. */
function resourceError(error: unknown, backend: McpBackend): McpError {
  if (isLcmError(error)) {
    if (error.code === "not_found" || error.code === "forbidden") return new McpError(RESOURCE_NOT_FOUND, error.message);
    if (error.code === "invalid_input") return new McpError(ErrorCode.InvalidParams, error.message);
    return new McpError(ErrorCode.InternalError, error.message);
  }
  backend.logger.error(`reading a resource failed unexpectedly: ${describeError(error)}`);
  return new McpError(ErrorCode.InternalError, `Reading the resource failed: ${describeError(error)}`);
}
