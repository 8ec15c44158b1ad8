// The shell of every HTML report: one self-contained file, its CSS and script inline, nothing fetched when it is opened.
import { Html, html } from "./html-escape.js";

/** The page may load nothing from anywhere: no network at view time, even if some text slipped through unescaped. */
const POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const STYLE = `
:root { --fg: #1d2430; --dim: #6b7585; --line: #dde2ea; --model: #4f7fd9; --tool: #2e9d6a; --bad: #d2483f; --warn: #d08b1c; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); margin: 0 auto; max-width: 1200px; padding: 16px 24px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.facts { display: flex; flex-wrap: wrap; gap: 6px 22px; color: var(--dim); margin: 6px 0; } .facts b { color: var(--fg); font-weight: 600; }
.status { font-weight: 700; } .status-COMPLETED { color: var(--tool); } .status-FAILED { color: var(--bad); }
.status-RUNNING { color: var(--model); } .status-INTERRUPTED, .status-WAITING_FOR_INPUT { color: var(--warn); }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fb; border: 1px solid var(--line); border-radius: 4px; padding: 8px; margin: 6px 0; font: 12px/1.4 ui-monospace, monospace; }
svg text { font: 11px system-ui, sans-serif; fill: var(--dim); } .row-label { text-anchor: end; } .tick text { text-anchor: middle; }
.tick line { stroke: var(--line); } .bar { cursor: pointer; } .bar.model { fill: var(--model); } .bar.tool { fill: var(--tool); }
.bar.outcome-FAILED, .bar.outcome-ERROR, .bar.outcome-unfinished { fill: var(--bad); } .bar:hover { opacity: .75; }
.token.field-input_tokens, .swatch.field-input_tokens { fill: var(--model); background: var(--model); }
.token.field-output_tokens, .swatch.field-output_tokens { fill: var(--tool); background: var(--tool); }
.token.field-cached_input_tokens, .swatch.field-cached_input_tokens { fill: #9db7ea; background: #9db7ea; }
.token.field-cache_write_input_tokens, .swatch.field-cache_write_input_tokens { fill: #c9b3ea; background: #c9b3ea; }
.token.field-reasoning_tokens, .swatch.field-reasoning_tokens { fill: var(--warn); background: var(--warn); }
.swatch { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; border-radius: 2px; } .legend { color: var(--dim); margin: 0; }
details.event { border-bottom: 1px solid var(--line); padding: 3px 0; } details.event > summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
details.event.flash { background: #fff6d6; } .seq { color: var(--dim); display: inline-block; min-width: 110px; font-variant-numeric: tabular-nums; }
.type { display: inline-block; min-width: 150px; font-weight: 600; } .type-ERROR .type { color: var(--bad); } .type-THOUGHT .type { color: var(--model); }
.type-ACTION_RESULT .type { color: var(--tool); } .empty { color: var(--dim); }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: middle; }
th { color: var(--dim); font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; } td.task { max-width: 320px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.gantt { width: 220px; } .gantt svg { display: block; } .gantt rect { fill: var(--model); } .gantt .status-COMPLETED { fill: var(--tool); } .gantt .status-FAILED { fill: var(--bad); }
button { font: inherit; margin-right: 6px; }
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

export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
${body}
<script>${new Html(SCRIPT)}</script>
</body>
</html>
`.text;
}
