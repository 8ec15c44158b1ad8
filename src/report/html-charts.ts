// The report's charts, readable at any width: the timeline of model attempts, tools, waits and hooks, and tokens per iteration.
//
// The marks are an SVG drawn on an x axis of 0–1000 and stretched to the width of the page (preserveAspectRatio
// none; heights stay in pixels); every label is HTML placed by percent beside or below it, so on a phone the chart
// fits the screen and its text keeps its size, where a scaled SVG would shrink it to a few pixels.
import { html, type Html } from "./html-escape.js";
import { formatMs } from "./show-text.js";
import type { Span } from "./timeline.js";
import { USAGE_FIELDS, formatUsage, type UsageTotals } from "./usage-fields.js";

/** The x axis of every chart's SVG. */
const WIDTH = 1000;
const ROW = 18;
/** A bar this narrow (in x units) still shows: a call of a millisecond is a mark, not nothing. */
const MIN_BAR = 4;

/** One row per iteration, each bar placed by start time and length; the axis spans the whole run, so a call at its end is never cut off. */
export function timelineSvg(spans: readonly Span[], run: { start: number | null; end: number | null }): Html {
  if (spans.length === 0) return html`<p class="empty">No model call or tool execution recorded yet.</p>`;
  const t0 = Math.min(...spans.map((span) => span.start), run.start ?? Infinity);
  const t1 = Math.max(...spans.map((span) => span.start + span.durationMs), run.end ?? -Infinity, t0 + 1);
  const rows = [...new Set(spans.map((span) => span.iteration))].sort((a, b) => a - b);
  const rowOf = new Map(rows.map((iteration, index) => [iteration, index]));
  const x = (t: number): number => ((t - t0) / (t1 - t0)) * WIDTH;
  const height = rows.length * ROW;
  const ticks = niceTicks(t1 - t0).map((ms) => ({ ms, at: x(t0 + ms) }));
  return html`<div class="chart-grid">
<div class="x-labels">${ticks.map(({ ms, at }) => html`<span class="tick-label${edgeClass(at)}" style="left: ${(at / 10).toFixed(2)}%">${formatMs(ms)}</span>`)}</div>
<div class="y-labels">${rows.map((iteration) => html`<span class="row-label" style="height: ${ROW}px">${iteration === 0 ? "before" : `[${iteration}]`}</span>`)}</div>
<svg class="timeline" viewBox="0 0 ${WIDTH} ${height}" preserveAspectRatio="none" width="100%" height="${height}" role="img" aria-label="Timeline of model calls, tools, waits and hooks">
${ticks.map(({ at }) => html`<line class="tick" x1="${at.toFixed(1)}" x2="${at.toFixed(1)}" y1="0" y2="${height}"/>`)}
${spans.map((span) => {
    const left = x(span.start);
    const width = Math.max(MIN_BAR, x(span.start + span.durationMs) - left);
    const row = rowOf.get(span.iteration)! * ROW;
    // Hooks and waits are thinner than the calls they sit between.
    const [y, h] = span.kind === "hook" || span.kind === "wait" ? [row + 6, ROW - 12] : [row + 3, ROW - 6];
    const kindClass = span.kind === "wait" ? "wait" : `bar ${span.kind}`;
    return html`<rect class="${kindClass} outcome-${span.outcome}"${span.seq > 0 ? html` data-seq="${span.seq}"` : ""} x="${left.toFixed(1)}" y="${y}" width="${width.toFixed(1)}" height="${h}"><title>${span.label} · ${formatMs(span.durationMs)} · ${span.outcome}</title></rect>`;
  })}
</svg>
</div>`;
}

/** Grouped bars per iteration, one per token field the journal holds, each iteration labelled below and every bar's value in its tooltip. */
export function tokensSvg(perIteration: readonly { iteration: number; usage: UsageTotals }[]): Html {
  const fields = USAGE_FIELDS.filter((field) => field.key !== "cost_usd" && perIteration.some(({ usage }) => usage[field.key] !== undefined));
  if (fields.length === 0) return html`<p class="empty">The journal holds no token usage for this run.</p>`;
  const max = Math.max(1, ...perIteration.flatMap(({ usage }) => fields.map((field) => usage[field.key] ?? 0)));
  const height = 140;
  const slot = WIDTH / perIteration.length;
  const bar = Math.min(24, Math.max(1, (slot * 0.8) / fields.length));
  // At most about 40 labels, and when there are more than 10, a quarter of them on a narrow screen.
  const every = Math.max(1, Math.ceil(perIteration.length / 40));
  const crowded = perIteration.length / every > 10;
  const y = (value: number): number => (1 - value / max) * height;
  const labels = perIteration.flatMap(({ iteration }, index) => {
    if (index % every !== 0) return [];
    const centre = index * slot + (fields.length * bar) / 2;
    const narrow = crowded && (index / every) % 4 !== 0 ? " wide-only" : "";
    return [html`<span class="iteration-label${narrow}${edgeClass(centre)}" style="left: ${(centre / 10).toFixed(2)}%">[${iteration}]</span>`];
  });
  return html`<div class="chart-grid">
<div class="y-labels token-scale" style="height: ${height}px"><span>${max.toLocaleString("en-US")}</span><span>0</span></div>
<svg class="tokens" viewBox="0 0 ${WIDTH} ${height}" preserveAspectRatio="none" width="100%" height="${height}" role="img" aria-label="Tokens per iteration">
${perIteration.map(({ iteration, usage }, index) => {
    const left = index * slot;
    return html`<g class="iteration" data-iteration="${iteration}"><title>[${iteration}] ${formatUsage(usage) ?? "no usage"}</title>${fields.map((field, f) => {
      const value = usage[field.key] ?? 0;
      return html`<rect class="token field-${field.key}" x="${(left + f * bar).toFixed(1)}" y="${y(value).toFixed(1)}" width="${bar.toFixed(1)}" height="${(height - y(value)).toFixed(1)}"><title>[${iteration}] ${field.label} ${field.format(value)}</title></rect>`;
    })}</g>`;
  })}
</svg>
<div class="x-labels below">${labels}</div>
</div>
<p class="legend">${fields.map((field) => html`<span class="swatch field-${field.key}"></span>${field.label} `)}</p>`;
}

/** A label at the chart's very start or end is kept inside it, not centred over its edge. */
function edgeClass(at: number): string {
  return at < WIDTH * 0.05 ? " at-start" : at > WIDTH * 0.95 ? " at-end" : "";
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
