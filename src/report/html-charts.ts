// Inline SVG charts of the report: the timeline of model attempts, tools, waits and hooks, and tokens per iteration.
import { html, type Html } from "./html-escape.js";
import { formatMs } from "./show-text.js";
import type { Span } from "./timeline.js";
import { USAGE_FIELDS, formatUsage, type UsageTotals } from "./usage-fields.js";

const WIDTH = 1000;
const LABEL = 70;
const ROW = 18;
const AXIS = 24;

/** One row per iteration, each bar placed by start time and length; the axis spans the whole run, so a call at its end is never cut off. */
export function timelineSvg(spans: readonly Span[], run: { start: number | null; end: number | null }): Html {
  if (spans.length === 0) return html`<p class="empty">No model call or tool execution recorded yet.</p>`;
  const t0 = Math.min(...spans.map((span) => span.start), run.start ?? Infinity);
  const t1 = Math.max(...spans.map((span) => span.start + span.durationMs), run.end ?? -Infinity, t0 + 1);
  const rows = [...new Set(spans.map((span) => span.iteration))].sort((a, b) => a - b);
  const rowOf = new Map(rows.map((iteration, index) => [iteration, index]));
  const plot = WIDTH - LABEL - 10;
  const x = (t: number): number => LABEL + ((t - t0) / (t1 - t0)) * plot;
  const height = AXIS + rows.length * ROW + 4;
  const ticks = niceTicks(t1 - t0);
  return html`<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="Timeline of model calls, tools, waits and hooks">
${ticks.map((ms) => html`<g class="tick"><line x1="${x(t0 + ms).toFixed(1)}" x2="${x(t0 + ms).toFixed(1)}" y1="${AXIS - 6}" y2="${height}"/><text x="${x(t0 + ms).toFixed(1)}" y="${AXIS - 10}">${formatMs(ms)}</text></g>`)}
${rows.map((iteration, index) => html`<text class="row-label" x="${LABEL - 8}" y="${AXIS + index * ROW + 13}">${iteration === 0 ? "before" : `[${iteration}]`}</text>`)}
${spans.map((span) => {
    const left = x(span.start);
    const width = Math.max(2, x(span.start + span.durationMs) - left);
    const row = AXIS + rowOf.get(span.iteration)! * ROW;
    // Hooks and waits are thinner than the calls they sit between.
    const [y, h] = span.kind === "hook" || span.kind === "wait" ? [row + 6, ROW - 12] : [row + 3, ROW - 6];
    const kindClass = span.kind === "wait" ? "wait" : `bar ${span.kind}`;
    return html`<rect class="${kindClass} outcome-${span.outcome}"${span.seq > 0 ? html` data-seq="${span.seq}"` : ""} x="${left.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${h}" rx="2"><title>${span.label} · ${formatMs(span.durationMs)} · ${span.outcome}</title></rect>`;
  })}
</svg>`;
}

/** Grouped bars per iteration, one per token field the journal holds, each iteration labelled below and every bar's value in its tooltip. */
export function tokensSvg(perIteration: readonly { iteration: number; usage: UsageTotals }[]): Html {
  const fields = USAGE_FIELDS.filter((field) => field.key !== "cost_usd" && perIteration.some(({ usage }) => usage[field.key] !== undefined));
  if (fields.length === 0) return html`<p class="empty">The journal holds no token usage for this run.</p>`;
  const max = Math.max(1, ...perIteration.flatMap(({ usage }) => fields.map((field) => usage[field.key] ?? 0)));
  const height = 170;
  const base = height - 30;
  const plot = WIDTH - LABEL - 10;
  const slot = plot / perIteration.length;
  const bar = Math.min(24, Math.max(1, (slot * 0.8) / fields.length));
  // At most about 40 labels: a long run labels every n-th iteration.
  const every = Math.max(1, Math.ceil(perIteration.length / 40));
  const y = (value: number): number => 10 + (1 - value / max) * (base - 10);
  return html`<svg class="tokens" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="Tokens per iteration">
<text class="row-label" x="${LABEL - 8}" y="14">${max.toLocaleString("en-US")}</text><text class="row-label" x="${LABEL - 8}" y="${base}">0</text>
${perIteration.map(({ iteration, usage }, index) => {
    const left = LABEL + index * slot;
    return html`<g class="iteration" data-iteration="${iteration}"><title>[${iteration}] ${formatUsage(usage) ?? "no usage"}</title>${fields.map((field, f) => {
      const value = usage[field.key] ?? 0;
      return html`<rect class="token field-${field.key}" x="${(left + f * bar).toFixed(1)}" y="${y(value).toFixed(1)}" width="${bar.toFixed(1)}" height="${(base - y(value)).toFixed(1)}"><title>[${iteration}] ${field.label} ${field.format(value)}</title></rect>`;
    })}${index % every === 0 ? html`<text class="iteration-label" x="${(left + (fields.length * bar) / 2).toFixed(1)}" y="${base + 16}">[${iteration}]</text>` : ""}</g>`;
  })}
</svg>
<p class="legend">${fields.map((field) => html`<span class="swatch field-${field.key}"></span>${field.label} `)}</p>`;
}

/** About five round steps (1, 2 or 5 × 10^n ms) across a span. */
function niceTicks(spanMs: number): number[] {
  const rough = spanMs / 5;
  const power = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  const step = [1, 2, 5, 10].map((m) => m * power).find((candidate) => candidate >= rough) ?? power * 10;
  const ticks: number[] = [];
  for (let ms = 0; ms <= spanMs; ms += step) ticks.push(ms);
  return ticks;
}
