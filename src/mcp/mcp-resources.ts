/**
 * Resources a client can attach: `lcm://conversation/<id>`, a conversation as its agent's model sees it now (the
 * summaries, then the newest messages, as the assembler picks them, within the result limit), and
 * `lcm://summary/<id>`, a summary as lcm_describe shows it. The newest served conversations are listed; any served
 * conversation or summary can be read through the two templates. A URI of an agent the server does not serve reads
 * as "not found", as it does for the tools.
 */
import type { Resource, ResourceTemplate } from "@modelcontextprotocol/sdk/types.js";
import { isLcmError, LcmError } from "../errors.js";
import { isoTime } from "../search/iso-time.js";
import { characterLimit } from "../retrieval/window-share.js";
import { previewContext } from "../services/context-preview.js";
import { lcmDescribe } from "../tools/lcm-describe-tool.js";
import type { McpBackend } from "./mcp-backend.js";
import { readableConversation, servedConversations } from "./mcp-overview-tools.js";
import { withinChars } from "./mcp-results.js";

/** How many conversations resources/list names (newest activity first); the template reaches every one. */
const LISTED_CONVERSATIONS = 100;
const CONVERSATION_URI = /^lcm:\/\/conversation\/(\d{1,15})$/;
const SUMMARY_URI = /^lcm:\/\/summary\/([^/]+)$/;

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: "lcm://conversation/{conversationId}",
    name: "conversation",
    title: "OpenClaw conversation",
    description: "A conversation as its agent's model sees it now: the summaries of older turns, then the newest messages.",
    mimeType: "text/plain",
  },
  {
    uriTemplate: "lcm://summary/{summaryId}",
    name: "summary",
    title: "LCM summary",
    description: "One summary (sum_…) with its time range and lineage, as lcm_describe shows it.",
    mimeType: "text/plain",
  },
];

export async function listResources(backend: McpBackend): Promise<Resource[]> {
  const listed = await servedConversations(backend, null, LISTED_CONVERSATIONS);
  return listed.map(({ conversation, summaries }) => ({
    uri: `lcm://conversation/${conversation.conversationId}`,
    name: `conversation-${conversation.conversationId}`,
    title: `Conversation ${conversation.conversationId} · ${conversation.agentId} · ${conversation.sessionKey ?? conversation.sessionId}`,
    description: `${conversation.messageCount} messages, ${summaries} summaries, last activity ${isoTime(conversation.updatedAt)}`,
    mimeType: "text/plain",
  }));
}

/** The text of a resource; throws LcmError (invalid_input for a URI of another shape, not_found) like the tools. */
export async function readResource(backend: McpBackend, uri: string): Promise<string> {
  const conversation = CONVERSATION_URI.exec(uri);
  if (conversation) return conversationText(backend, Number(conversation[1]));
  const summary = SUMMARY_URI.exec(uri);
  if (summary) {
    const result = await lcmDescribe(backend.recall, backend.reader, { id: decodeURIComponent(summary[1]!) }).catch((error: unknown) => {
      throw isLcmError(error) && error.code === "invalid_input"
        ? new LcmError("invalid_input", `${uri} does not name a summary: expected lcm://summary/sum_ followed by 16 hex digits.`)
        : error;
    });
    return withinChars(result.content.map((part) => part.text).join("\n"), backend.reader.maxResultChars);
  }
  throw new LcmError("invalid_input", `Unknown resource ${JSON.stringify(uri.slice(0, 200))}: expected lcm://conversation/<id> or lcm://summary/<sum_…>.`);
}

async function conversationText(backend: McpBackend, conversationId: number): Promise<string> {
  const conversation = await readableConversation(backend, conversationId, "uri");
  const maxChars = backend.reader.maxResultChars;
  // The assembler's pick at a budget that fits the result limit: summaries first, the newest messages last.
  const budgetTokens = characterLimit(maxChars).answerTokens;
  const preview = await previewContext({ ...conversation, lastTokenBudget: budgetTokens }, {
    store: backend.stores.store, tokens: backend.tokens, systemPromptAddition: { text: "", tokens: 0 }, defaultTokenBudget: budgetTokens,
  });
  const { totals } = preview;
  const header = [
    `Conversation ${conversation.conversationId} · agent ${conversation.agentId} · session ${conversation.sessionKey ?? "(no key)"} (${conversation.sessionId})`,
    `${conversation.messageCount} messages (${conversation.messageTokens} tokens) stored from ${isoTime(conversation.createdAt)}` +
      `${conversation.lastIngestAt !== null ? ` to ${isoTime(conversation.lastIngestAt)}` : ""}.`,
    `Below: ${totals.summaryCount} summaries and the newest ${totals.rawMessageCount} messages, as the agent's model sees them` +
      `${totals.evictedOlderItems ? " (older context left out to fit; lcm_grep and lcm_expand read everything)" : ""}.`,
  ];
  const body = preview.messages.map((message) => `\n[${message.kind === "summary" ? "summary" : message.role}]\n${message.text}`);
  return withinChars([...header, ...body].join("\n"), maxChars);
}
