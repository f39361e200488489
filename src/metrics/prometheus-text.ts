/**
 * Prometheus text exposition format, version 0.0.4: `# HELP` and `# TYPE` per family, then one line per sample.
 * What a Prometheus server or `curl` reads from the gateway's /lcm/metrics route.
 */
import type { Labels, MetricFamily } from "./metric-registry.js";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export function renderPrometheusText(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      lines.push(`${family.name}${sample.suffix}${renderLabels(sample.labels)} ${renderValue(sample.value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

function renderLabels(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length === 0) return "";
  return `{${names.map((name) => `${name}="${escapeLabel(labels[name]!)}"`).join(",")}}`;
}

function renderValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1_000) / 1_000);
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function escapeLabel(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}
