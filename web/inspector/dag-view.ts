/**
 * The summary DAG drawn as a graph with Cytoscape.js (canvas drawing, pan, zoom, selection): each summary is a node
 * placed by depth (rows, deepest on top) and by the time its sources span (the message order, through a d3-scale
 * linear scale), sized by its tokens (a square-root scale), coloured by how its text was written and shaped by kind;
 * edges go from the summaries a condensed summary folded, and from each leaf to the message range it covers. Large
 * graphs (thousands of nodes) hide edges and use a cached texture while the view moves, so pan and zoom stay smooth.
 */
import cytoscape, { type Core, type ElementDefinition } from "cytoscape";
import { scaleLinear, scalePoint, scaleSqrt } from "d3-scale";

export interface DagNode {
  summaryId: string;
  kind: "leaf" | "condensed";
  depth: number;
  level: "normal" | "aggressive" | "fallback";
  writtenBy: string | null;
  tokenCount: number;
  seqStart: number;
  seqEnd: number;
  parentSummaryIds: string[];
  inContext: boolean;
}

export interface Dag {
  nodes: DagNode[];
  ranges: { summaryId: string; seqStart: number; seqEnd: number; messages: number }[];
}

/** How a summary's current text was written, as the colours say. */
export const WRITERS = {
  model: { label: "model", color: "#2f6fdf" },
  deterministic: { label: "deterministic", color: "#8a8f98" },
  compaction: { label: "compaction (writer not recorded)", color: "#2a9d8f" },
  hand: { label: "by hand", color: "#9c36b5" },
  fallback: { label: "fallback truncation", color: "#e8590c" },
} as const;

export type Writer = keyof typeof WRITERS;

export function writerOf(node: Pick<DagNode, "level" | "writtenBy">): Writer {
  if (node.level === "fallback") return "fallback";
  if (node.writtenBy === "hand") return "hand";
  if (node.writtenBy?.startsWith("model:")) return "model";
  if (node.writtenBy === "deterministic") return "deterministic";
  return "compaction";
}

const ROW_HEIGHT = 140;
const LARGE_GRAPH = 2_000;

export function drawDag(container: HTMLElement, dag: Dag, onSelect: (summaryId: string) => void): Core {
  const { nodes } = dag;
  const seqStart = Math.min(...nodes.map((node) => node.seqStart), ...dag.ranges.map((range) => range.seqStart));
  const seqEnd = Math.max(...nodes.map((node) => node.seqEnd), seqStart + 1);
  const leaves = nodes.filter((node) => node.kind === "leaf").length;
  const x = scaleLinear().domain([seqStart, seqEnd]).range([0, Math.max(900, leaves * 36)]);
  const depths = [...new Set(nodes.map((node) => node.depth))].sort((a, b) => b - a);
  const rows = [...depths.map(String), "messages"];
  const y = scalePoint<string>().domain(rows).range([0, ROW_HEIGHT * (rows.length - 1)]);
  const size = scaleSqrt().domain([0, Math.max(1, ...nodes.map((node) => node.tokenCount))]).range([12, 46]);
  const elements: ElementDefinition[] = [];
  for (const node of nodes) {
    elements.push({
      group: "nodes",
      data: { id: node.summaryId, label: node.summaryId.slice(4, 10), size: size(node.tokenCount), color: WRITERS[writerOf(node)].color },
      position: { x: x((node.seqStart + node.seqEnd) / 2), y: y(String(node.depth)) ?? 0 },
      classes: [node.kind, node.inContext ? "in-context" : ""].join(" "),
    });
    for (const parent of node.parentSummaryIds) {
      elements.push({ group: "edges", data: { id: `${parent}>${node.summaryId}`, source: parent, target: node.summaryId } });
    }
  }
  for (const range of dag.ranges) {
    const id = `range:${range.summaryId}`;
    elements.push({
      group: "nodes",
      data: { id, label: `${range.seqStart}–${range.seqEnd}`, width: Math.max(6, x(range.seqEnd) - x(range.seqStart) - 4), of: range.summaryId },
      position: { x: x((range.seqStart + range.seqEnd) / 2), y: y("messages") ?? 0 },
      classes: "range",
    });
    elements.push({ group: "edges", data: { id: `${id}>${range.summaryId}`, source: id, target: range.summaryId }, classes: "source" });
  }
  const large = nodes.length > LARGE_GRAPH;
  const cy = cytoscape({
    container, elements, layout: { name: "preset" }, minZoom: 0.01, maxZoom: 4, wheelSensitivity: 0.3,
    hideEdgesOnViewport: large, textureOnViewport: large, pixelRatio: large ? 1 : "auto", boxSelectionEnabled: false,
    style: [
      {
        selector: "node",
        style: {
          "background-color": "data(color)", width: "data(size)", height: "data(size)", label: "data(label)",
          "font-size": 9, color: "#444", "text-valign": "bottom", "text-margin-y": 3, "min-zoomed-font-size": 7,
          "border-width": 1, "border-color": "#ffffff",
        },
      },
      { selector: "node.condensed", style: { shape: "round-rectangle" } },
      { selector: "node.in-context", style: { "border-width": 3, "border-color": "#1f2430" } },
      {
        selector: "node.range",
        style: { shape: "rectangle", width: "data(width)", height: 10, "background-color": "#c9ced8", "font-size": 8, "border-width": 0 },
      },
      { selector: "node:selected", style: { "border-width": 4, "border-color": "#f5b700" } },
      { selector: "edge", style: { width: 1, "line-color": "#b8bfcc", "curve-style": "straight", "target-arrow-shape": "none" } },
      { selector: "edge.source", style: { "line-style": "dashed", "line-color": "#d4d8e0" } },
    ],
  });
  cy.on("tap", "node", (event) => {
    const id = event.target.id() as string;
    onSelect(id.startsWith("range:") ? (event.target.data("of") as string) : id);
  });
  return cy;
}

/** Selects and centres a node (a search hit, a lineage link). */
export function focusNode(cy: Core, summaryId: string): boolean {
  const node = cy.getElementById(summaryId);
  if (node.empty()) return false;
  cy.elements().unselect();
  node.select();
  cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 0.8) }, { duration: 200 });
  return true;
}
