/**
 * `lcm dag <conversation>`: the summary DAG as a tree: what the model sees at the top, each summary above the ones it
 * condensed, down to the leaf summaries and the message ranges they cover; then the raw messages still in context.
 */
import type { SummaryNode } from "../../store/operator-store.js";
import { type SummaryTreeNode, summaryTree } from "../../services/summary-tree.js";
import type { CliRuntime, CommandOutput } from "../cli-runtime.js";
import { count, preview } from "../format.js";
import { isoOrNever } from "../../search/iso-time.js";
import { requireConversation } from "./context-command.js";

const PREVIEW_CHARS = 240;

export interface DagNode extends Omit<SummaryNode, "earliestAt" | "latestAt" | "createdAt"> {
  earliestAt: string;
  latestAt: string;
  createdAt: string;
  children: DagNode[];
}

export interface DagOutput {
  conversationId: number;
  summaries: number;
  rawContextTokens: number;
  roots: DagNode[];
}

export async function dagCommand(runtime: CliRuntime, conversationId: number): Promise<CommandOutput<DagOutput>> {
  const stores = runtime.open("read");
  const conversation = await requireConversation(stores, conversationId);
  const nodes = await stores.operator.summaryNodes(conversationId, PREVIEW_CHARS);
  const roots = summaryTree(nodes).map(toDagNode);
  const lines = [`Summary DAG of conversation ${conversationId} (agent ${conversation.agentId}): ${count(nodes.length)} summaries`];
  if (nodes.length === 0) lines.push("(no summaries yet: nothing was compacted)");
  roots.forEach((root, index) => render(root, "", index === roots.length - 1, lines, true));
  lines.push(`+ raw messages in context: ${count(conversation.contextRawTokens)} tokens (${count(conversation.messageCount)} messages stored in all)`);
  return { data: { conversationId, summaries: nodes.length, rawContextTokens: conversation.contextRawTokens, roots }, text: lines.join("\n") };
}

function toDagNode(node: SummaryTreeNode): DagNode {
  const { summary } = node;
  return {
    ...summary,
    earliestAt: isoOrNever(summary.earliestAt),
    latestAt: isoOrNever(summary.latestAt),
    createdAt: isoOrNever(summary.createdAt),
    children: node.children.map(toDagNode),
  };
}

function render(node: DagNode, indent: string, isLast: boolean, lines: string[], isRoot: boolean): void {
  const branch = isRoot ? "" : isLast ? "└─ " : "├─ ";
  const level = node.level === "normal" ? "" : ` · ${node.level}`;
  const seen = node.inContext ? " · in context" : "";
  lines.push(
    `${indent}${branch}${node.summaryId} ${node.kind} d${node.depth} · ${count(node.tokenCount)} tokens (from ${count(node.sourceTokenCount)}) · ` +
      `${count(node.sourceMessageCount)} messages seq ${node.seqStart}-${node.seqEnd} · ${node.earliestAt} → ${node.latestAt}${level}${seen}`,
  );
  const childIndent = isRoot ? indent : indent + (isLast ? "   " : "│  ");
  lines.push(`${childIndent}${node.children.length > 0 ? "│  " : "   "}“${preview(node.preview, 100)}”`);
  node.children.forEach((child, index) => render(child, childIndent, index === node.children.length - 1, lines, false));
}
