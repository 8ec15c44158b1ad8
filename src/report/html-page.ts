// The shell of every HTML report: one self-contained file, its CSS and script inline, nothing fetched when it is opened.
import { Html, html } from "./html-escape.js";

/** The page may load nothing from anywhere: no network at view time, even if some text slipped through unescaped. */
const POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/**
 * One colour language: SUCCESS and COMPLETED green, FAILED and ERROR red, waiting amber (a retry's
 * wait, ask_human, WAITING_FOR_INPUT, INTERRUPTED, DEFERRED), model calls blue, tools violet, hooks grey.
 */
const STYLE = `
:root { --fg: #1d2430; --dim: #5f6979; --line: #dde2ea; --ok: #1e8a4c; --bad: #cf3a30; --warn: #c27c0e; --model: #3f6fd1; --tool: #7c5cc4; --hook: #8a94a6; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); margin: 0 auto; max-width: 1200px; padding: 12px 16px 48px; overflow-wrap: anywhere; }
h1 { font-size: 18px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.outcome { border: 1px solid var(--line); border-left: 6px solid var(--dim); border-radius: 4px; padding: 8px 12px; margin: 0 0 10px; }
.outcome-COMPLETED { border-left-color: var(--ok); } .outcome-FAILED { border-left-color: var(--bad); background: #fdf1f0; }
.outcome-WAITING_FOR_INPUT, .outcome-INTERRUPTED, .outcome-DEFERRED { border-left-color: var(--warn); background: #fdf6ea; } .outcome-RUNNING { border-left-color: var(--model); }
.outcome p { margin: 4px 0; } .outcome .error { white-space: pre-wrap; } .outcome .next { color: var(--dim); font: 12px/1.4 ui-monospace, monospace; }
.facts { display: flex; flex-wrap: wrap; gap: 4px 18px; color: var(--dim); margin: 6px 0; } .facts b { color: var(--fg); font-weight: 600; }
.status { font-weight: 700; } .status-COMPLETED, .status-SUCCESS { color: var(--ok); } .status-FAILED, .status-ERROR { color: var(--bad); }
.status-RUNNING { color: var(--model); } .status-INTERRUPTED, .status-WAITING_FOR_INPUT, .status-DEFERRED { color: var(--warn); }
.dim { color: var(--dim); }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fb; border: 1px solid var(--line); border-radius: 4px; padding: 8px; margin: 6px 0; font: 12px/1.4 ui-monospace, monospace; }
svg { display: block; max-width: 100%; }
.chart-grid { display: grid; grid-template-columns: 52px minmax(0, 1fr); font: 11px/1.2 system-ui, sans-serif; color: var(--dim); }
.chart-grid svg { grid-column: 2; width: 100%; } .chart-grid .y-labels { grid-column: 1; display: flex; flex-direction: column; align-items: flex-end; padding-right: 6px; }
.chart-grid .x-labels { grid-column: 2; position: relative; height: 16px; } .x-labels.below { margin-top: 2px; }
.x-labels span { position: absolute; top: 0; transform: translateX(-50%); white-space: nowrap; } .x-labels .at-start { transform: none; } .x-labels .at-end { transform: translateX(-100%); }
.row-label { line-height: 18px; } .token-scale { justify-content: space-between; }
line.tick { stroke: var(--line); vector-effect: non-scaling-stroke; } .bar, .wait { cursor: pointer; } .bar.model { fill: var(--model); } .bar.tool { fill: var(--tool); } .bar.hook { fill: var(--hook); }
.bar.ask, .wait { fill: var(--warn); } .wait { opacity: .55; }
.bar.outcome-FAILED, .bar.outcome-ERROR, .bar.outcome-unfinished, .bar.hook.outcome-block, .bar.hook.outcome-warning { fill: var(--bad); } .bar:hover { opacity: .75; }
.token.field-input_tokens, .swatch.field-input_tokens { fill: var(--model); background: var(--model); }
.token.field-output_tokens, .swatch.field-output_tokens { fill: var(--tool); background: var(--tool); }
.token.field-cached_input_tokens, .swatch.field-cached_input_tokens { fill: #9db7ea; background: #9db7ea; }
.token.field-cache_write_input_tokens, .swatch.field-cache_write_input_tokens { fill: #c9b3ea; background: #c9b3ea; }
.token.field-reasoning_tokens, .swatch.field-reasoning_tokens { fill: var(--warn); background: var(--warn); }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; border-radius: 2px; } .legend { color: var(--dim); margin: 0; }
.key-model { background: var(--model); } .key-tool { background: var(--tool); } .key-bad { background: var(--bad); } .key-wait { background: var(--warn); } .key-hook { background: var(--hook); }
details.event { border-bottom: 1px solid var(--line); padding: 3px 0; }
details.event > summary { cursor: pointer; display: flex; gap: 10px; align-items: baseline; list-style: none; white-space: nowrap; }
details.event > summary::before { content: "▸"; color: var(--dim); } details.event[open] > summary::before { content: "▾"; }
details.event.flash { background: #fff6d6; } .seq { color: var(--dim); flex: none; font-variant-numeric: tabular-nums; }
.type { flex: none; font-weight: 600; } .gist { flex: 1; min-width: 0; overflow: hidden; text-overflow: ellipsis; }
.type-ERROR .type, .type-LLM_ATTEMPT_FAILED .type { color: var(--bad); } .type-THOUGHT .type { color: var(--model); }
.type-ACTION_REQUEST .type, .type-ACTION_RESULT .type { color: var(--tool); } .type-HUMAN_INPUT_REQUEST .type, .type-HUMAN_INPUT_RECEIVED .type { color: var(--warn); }
.body { padding: 4px 0 8px 18px; } dl.fields { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 4px 0; } dl.fields dt { color: var(--dim); } dl.fields dd { margin: 0; }
details.raw > summary, details.whole > summary, details.reasoning > summary { cursor: pointer; color: var(--dim); font-size: 12px; }
.empty { color: var(--dim); }
.table-wrap { overflow-x: auto; } table { border-collapse: collapse; width: 100%; overflow-wrap: normal; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; white-space: nowrap; }
th { color: var(--dim); font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; } td.task { min-width: 200px; max-width: 420px; white-space: normal; }
td.error { font-size: 12px; min-width: 220px; max-width: 360px; white-space: normal; } td.error a { color: var(--bad); }
ul.paths { margin: 0 0 8px; padding-left: 18px; color: var(--dim); font: 12px/1.4 ui-monospace, monospace; }
section.run { border-top: 1px solid var(--line); margin-top: 16px; } section.run h3 { font-size: 15px; margin: 10px 0 4px; }
.gantt { width: 220px; } .gantt svg { display: block; } .gantt rect { fill: var(--model); } .gantt .status-COMPLETED { fill: var(--ok); } .gantt .status-FAILED { fill: var(--bad); }
.gantt .status-WAITING_FOR_INPUT, .gantt .status-INTERRUPTED, .gantt .status-DEFERRED { fill: var(--warn); }
button { font: inherit; margin-right: 6px; }
@media (max-width: 640px) {
  details.event > summary { flex-wrap: wrap; gap: 0 8px; } .gist { flex-basis: 100%; padding-left: 14px; }
  .wide-only { display: none; }
  table.runs, table.runs tbody, table.runs tr, table.runs td { display: block; width: auto; max-width: none; min-width: 0; }
  table.runs thead { display: none; } table.runs tr { border-bottom: 2px solid var(--line); padding: 4px 0; }
  table.runs td { border: 0; padding: 2px 0; white-space: normal; } table.runs td.num { text-align: left; }
  table.runs td::before { content: attr(data-label); display: inline-block; min-width: 6.5em; color: var(--dim); font-weight: 400; }
  table.runs td:empty { display: none; } table.runs td.gantt svg { display: inline-block; vertical-align: middle; max-width: calc(100% - 7em); }
}
`;

/** Clicking a bar opens its event; the buttons open or close every event. */
const SCRIPT = `
document.addEventListener("click", function (e) {
  var bar = e.target.closest && e.target.closest("[data-seq]");
  if (bar) {
    var event = document.getElementById("event-" + bar.getAttribute("data-seq"));
    if (event) { event.open = true; event.classList.add("flash"); event.scrollIntoView({ block: "center" }); setTimeout(function () { event.classList.remove("flash"); }, 1200); }
  }
  var toggle = e.target.closest && e.target.closest("[data-expand]");
  if (toggle) document.querySelectorAll("details.event").forEach(function (d) { d.open = toggle.getAttribute("data-expand") === "all"; });
});
`;

/** The page before and after its body, for a body written piece by piece (a run's events, streamed from its journal). */
export function pageAround(title: string): { head: string; tail: string } {
  return {
    head: html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
`.text,
    tail: html`
<script>${new Html(SCRIPT)}</script>
</body>
</html>
`.text,
  };
}
