// The HTML report of a workspace, written piece by piece: one row per run (status, error, iterations, tokens, cost, duration) on a shared time axis, and a section per run below.
import { pathToFileURL } from "node:url";
import shellQuote from "shell-quote";
import type { EventOf } from "../journal/events.js";
import { html, type Html } from "./html-escape.js";
import { pageAround } from "./html-page.js";
import type { RunRow } from "./run-account.js";
import { formatMs } from "./show-text.js";
import { addRunUsage, costText, formatTokens, type UsageTotals } from "./usage-fields.js";

const ERROR_CHARS = 240;

/** Writes the page piece by piece (the summary, a table row per run, a section per run): never the whole page as one string. */
export function writeWorkspaceReport(workDirs: readonly string[], runs: readonly RunRow[], write: (text: string) => void): void {
  const ordered = [...runs].sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0) || a.runId.localeCompare(b.runId));
  let t0 = Infinity;
  let t1 = -Infinity;
  const counts = new Map<string, number>();
  const total: UsageTotals = {};
  for (const run of ordered) {
    t0 = Math.min(t0, run.startedAt ?? Infinity);
    t1 = Math.max(t1, run.endedAt ?? -Infinity);
    counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
    addRunUsage(total, run.usage);
  }
  const span = Math.max(1, t1 - t0);
  const { head, tail } = pageAround(`Delta runs in ${workDirs.join(", ")}`);
  write(head);
  write(html`<header class="outcome" id="outcome"><h1>Runs</h1>
<ul class="paths">${workDirs.map((dir) => html`<li>${dir}</li>`)}</ul>
<div class="facts"><span>runs <b>${ordered.length}</b></span>${[...counts].map(([status, count]) => html`<span class="status status-${status}">${status} ${count}</span>`)}
<span>tokens <b>${formatTokens(total) ?? "none recorded"}</b></span><span>cost <b>${costText(total) ?? "not recorded"}</b></span>
${Number.isFinite(span) && ordered.length > 0 ? html`<span>wall time <b>${formatMs(span)}</b></span>` : ""}</div></header>
${ordered.length === 0 ? html`<p class="empty">No runs here.</p>` : html`<div class="table-wrap"><table class="runs">
<thead><tr><th>run</th><th>status</th><th>iterations</th><th>error</th><th>tokens</th><th>cost</th><th>duration</th><th class="gantt">when</th><th>task</th></tr></thead>
<tbody>
`}`.text);
  for (const run of ordered) write(tableRow(run, t0, span).text);
  if (ordered.length > 0) write("</tbody></table></div>");
  write("\n");
  for (const run of ordered) write(runSection(run).text);
  write(tail);
}

function tableRow(run: RunRow, t0: number, span: number): Html {
  const start = run.startedAt ?? t0;
  const end = run.endedAt ?? start;
  const left = ((start - t0) / span) * 220;
  const error = errorOf(run);
  // Each cell says what it is (data-label): on a narrow screen a row reads as a card of labelled lines.
  return html`<tr class="run" data-run="${run.runId}"><td data-label="run"><a href="#${sectionId(run)}">${run.runId}</a></td><td class="status status-${run.status}" data-label="status">${run.status}${run.holder?.state === "dead" ? " (engine gone)" : ""}</td>
<td class="num" data-label="iterations">${run.iterationCount}</td><td class="error" data-label="error">${error ? html`<a href="#${sectionId(run)}">${clipped(`${error.error_type}: ${error.error_message}`)}</a>` : ""}</td><td data-label="tokens">${formatTokens(run.usage) ?? "-"}</td><td class="num" data-label="cost">${costText(run.usage) ?? "-"}</td>
<td class="num" data-label="duration">${formatMs(end - start)}</td><td class="gantt" data-label="when"><svg viewBox="0 0 220 10" width="220" height="10"><rect class="status-${run.status}" x="${left.toFixed(1)}" y="1" height="8" width="${Math.max(2, ((end - start) / span) * 220).toFixed(1)}"><title>${run.firstTimestamp ?? ""} to ${run.lastTimestamp ?? ""}</title></rect></svg></td>
<td class="task" data-label="task" title="${run.task ?? ""}">${run.task === null ? "" : clipped(run.task)}</td></tr>
`;
}

/** A run's section: its outcome and whole error, and where to read more (its journal, the command for its own report). */
function runSection(run: RunRow): Html {
  const error = errorOf(run);
  const report = shellQuote.quote(["delta", "report", run.runId, "-w", run.workDir, "-o", `${run.runId}.html`]);
  return html`<section class="run" id="${sectionId(run)}"><h3>${run.runId} <span class="status status-${run.status}">${run.status}</span></h3>
${error ? html`<pre class="text error-text">${error.error_type}: ${error.error_message}</pre>` : ""}
${run.task === null ? "" : html`<p class="dim">task: ${clipped(run.task)}</p>`}
<p><a href="${pathToFileURL(run.paths.journal).href}">journal.jsonl</a> · <a href="${pathToFileURL(run.paths.runDir).href}">run folder</a> · its own report: <code>${report}</code></p></section>
`;
}

function sectionId(run: RunRow): string {
  return `run-${run.runId}`;
}

/** The error that ended a FAILED or INTERRUPTED run, or what a DEFERRED run waits for. */
function errorOf(run: RunRow): Pick<EventOf<"ERROR">, "error_type" | "error_message"> | null {
  if (run.status === "DEFERRED" && run.deferred) return { error_type: `deferred: ${run.deferred.reason}`, error_message: run.deferred.message };
  return run.status === "FAILED" || run.status === "INTERRUPTED" ? run.lastError : null;
}

function clipped(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > ERROR_CHARS ? `${flat.slice(0, ERROR_CHARS)}…` : flat;
}
