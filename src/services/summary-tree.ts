/**
 * The summary DAG of one conversation as a tree for display: the summaries the model sees (context items) at the
 * top, each above the summaries it condensed, down to the leaf summaries over raw messages. A summary no context
 * item and no other summary points at (it should not exist: `lcm doctor` reports it) is shown at the top too.
 */
import type { SummaryNode } from "../store/operator-store.js";

export interface SummaryTreeNode {
  summary: SummaryNode;
  children: SummaryTreeNode[];
}

export function summaryTree(nodes: readonly SummaryNode[]): SummaryTreeNode[] {
  const byId = new Map(nodes.map((node) => [node.summaryId, node]));
  const condensed = new Set(nodes.flatMap((node) => node.parentSummaryIds));
  const build = (node: SummaryNode, seen: Set<string>): SummaryTreeNode => ({
    summary: node,
    children: node.parentSummaryIds.flatMap((id) => {
      const child = byId.get(id);
      if (!child || seen.has(id)) return [];
      return [build(child, new Set([...seen, id]))];
    }),
  });
  return nodes.filter((node) => node.inContext || !condensed.has(node.summaryId)).map((node) => build(node, new Set([node.summaryId])));
}
