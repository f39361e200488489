/**
 * The latency chart: p95 of the per-turn and recall operations against history size, log-log, as a standalone
 * SVG (no dependencies). A flat line is the goal: cost that follows the assembled context, not the history.
 */
import type { SizeResult } from "../bars.js";

const SERIES: { phase: string; label: string; color: string }[] = [
  { phase: "assemble.raw.128k", label: "assemble, raw, 128k", color: "#1f77b4" },
  { phase: "assemble.raw.32k", label: "assemble, raw, 32k", color: "#6baed6" },
  { phase: "assemble.compacted.128k", label: "assemble, compacted, 128k", color: "#17becf" },
  { phase: "ingest.turn", label: "commitTurn (one turn)", color: "#2ca02c" },
  { phase: "engine.construct", label: "engine construction", color: "#98df8a" },
  { phase: "open.cold.new-process", label: "cold open", color: "#8c564b" },
  { phase: "grep.fts.rare.conversation", label: "full-text, rare", color: "#d62728" },
  { phase: "grep.fts.common.relevance.conversation", label: "full-text, common, relevance", color: "#ff9896" },
  { phase: "grep.regex.rare.all", label: "regex, rare, all history", color: "#9467bd" },
  { phase: "grep.regex.common.all", label: "regex, common, all history", color: "#c5b0d5" },
  { phase: "describe", label: "lcm_describe", color: "#e377c2" },
  { phase: "compaction.pass", label: "compaction pass (engine)", color: "#ff7f0e" },
];

const WIDTH = 860;
const HEIGHT = 440;
const LEFT = 70;
const RIGHT = 260;
const TOP = 30;
const BOTTOM = 50;

export function latencyChart(sizes: SizeResult[]): string {
  const sorted = [...sizes].sort((left, right) => left.size - right.size);
  const points = SERIES.map((series) => ({
    ...series,
    points: sorted.flatMap((size) => {
      const phase = size.phases.find((candidate) => candidate.name === series.phase);
      const p95 = phase?.status === "measured" ? phase.latency?.p95 : undefined;
      return p95 === undefined ? [] : [{ x: size.messages, y: Math.max(p95, 0.01) }];
    }),
  })).filter((series) => series.points.length > 0);
  const xs = sorted.map((size) => size.messages);
  const ys = points.flatMap((series) => series.points.map((point) => point.y));
  const xMin = Math.log10(Math.min(...xs, 10_000) / 1.5);
  const xMax = Math.log10(Math.max(...xs, 1_000_000) * 1.5);
  const yMin = Math.floor(Math.log10(Math.min(...ys, 0.1)));
  const yMax = Math.ceil(Math.log10(Math.max(...ys, 100)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const px = (x: number) => LEFT + ((Math.log10(x) - xMin) / (xMax - xMin)) * plotWidth;
  const py = (y: number) => TOP + plotHeight - ((Math.log10(y) - yMin) / (yMax - yMin)) * plotHeight;

  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${LEFT}" y="18" font-size="14" font-weight="bold">p95 latency (ms) against stored history (messages), log-log</text>`,
  ];
  for (let exponent = yMin; exponent <= yMax; exponent++) {
    const y = py(10 ** exponent);
    parts.push(`<line x1="${LEFT}" x2="${LEFT + plotWidth}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    parts.push(`<text x="${LEFT - 8}" y="${y + 4}" text-anchor="end">${Number((10 ** exponent).toPrecision(1))} ms</text>`);
  }
  for (const size of sorted) {
    const x = px(size.messages);
    parts.push(`<line x1="${x}" x2="${x}" y1="${TOP}" y2="${TOP + plotHeight}" stroke="#ddd"/>`);
    parts.push(`<text x="${x}" y="${TOP + plotHeight + 18}" text-anchor="middle">${size.label}</text>`);
  }
  for (const [bar, label] of [[25, "assemble bar 25 ms"], [50, "full-text bar 50 ms"], [100, "regex / cold-open bar 100 ms"]] as const) {
    if (bar < 10 ** yMin || bar > 10 ** yMax) continue;
    parts.push(`<line x1="${LEFT}" x2="${LEFT + plotWidth}" y1="${py(bar)}" y2="${py(bar)}" stroke="#999" stroke-dasharray="4 4"/>`);
    parts.push(`<text x="${LEFT + plotWidth - 4}" y="${py(bar) - 4}" text-anchor="end" fill="#777">${label}</text>`);
  }
  parts.push(`<text x="${LEFT + plotWidth / 2}" y="${HEIGHT - 10}" text-anchor="middle">messages stored</text>`);
  points.forEach((series, index) => {
    const path = series.points.map((point, pointIndex) => `${pointIndex === 0 ? "M" : "L"}${px(point.x).toFixed(1)},${py(point.y).toFixed(1)}`).join(" ");
    parts.push(`<path d="${path}" fill="none" stroke="${series.color}" stroke-width="2"/>`);
    for (const point of series.points) parts.push(`<circle cx="${px(point.x).toFixed(1)}" cy="${py(point.y).toFixed(1)}" r="3" fill="${series.color}"/>`);
    const legendY = TOP + 10 + index * 18;
    parts.push(`<line x1="${WIDTH - RIGHT + 20}" x2="${WIDTH - RIGHT + 40}" y1="${legendY}" y2="${legendY}" stroke="${series.color}" stroke-width="3"/>`);
    parts.push(`<text x="${WIDTH - RIGHT + 46}" y="${legendY + 4}">${series.label}</text>`);
  });
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}
