// The HTML report of a workspace: one row per run (status, iterations, tokens, cost, duration) on a shared time axis.
import { html } from "./html-escape.js";
import { page } from "./html-page.js";
import type { RunAccount } from "./run-account.js";
import { formatMs } from "./show-text.js";
import { addUsage, costText, formatUsage, type UsageTotals } from "./usage-fields.js";

export function workspaceReportHtml(workDirs: readonly string[], runs: readonly RunAccount[]): string {
  const ordered = [...runs].sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0) || a.runId.localeCompare(b.runId));
  const t0 = Math.min(...ordered.map((run) => run.startedAt ?? Infinity));
  const t1 = Math.max(...ordered.map((run) => run.endedAt ?? -Infinity));
  const span = Math.max(1, t1 - t0);
  const counts = new Map<string, number>();
  for (const run of ordered) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
  const total: UsageTotals = {};
  for (const run of ordered) addUsage(total, run.usage);
  const body = html`<h1>Runs in ${workDirs.join(", ")}</h1>
<div class="facts"><span>runs <b>${ordered.length}</b></span>${[...counts].map(([status, count]) => html`<span class="status status-${status}">${status} ${count}</span>`)}
<span>tokens <b>${formatUsage(total) ?? "none recorded"}</b></span><span>cost <b>${costText(total) ?? "not recorded"}</b></span>
${Number.isFinite(span) && ordered.length > 0 ? html`<span>wall time <b>${formatMs(span)}</b></span>` : ""}</div>
${ordered.length === 0 ? html`<p class="empty">No runs here.</p>` : html`<table>
<thead><tr><th>run</th><th>status</th><th>iterations</th><th>tokens</th><th>cost</th><th>duration</th><th class="gantt">when</th><th>task</th></tr></thead>
<tbody>
${ordered.map((run) => {
    const start = run.startedAt ?? t0;
    const end = run.endedAt ?? start;
    const left = ((start - t0) / span) * 220;
    return html`<tr class="run" data-run="${run.runId}"><td>${run.runId}</td><td class="status status-${run.status}">${run.status}${run.holder?.state === "dead" ? " (engine gone)" : ""}</td>
<td class="num">${run.iterations.length}</td><td>${formatUsage(run.usage) ?? "-"}</td><td class="num">${costText(run.usage) ?? "-"}</td>
<td class="num">${formatMs(end - start)}</td><td class="gantt"><svg viewBox="0 0 220 10" width="220" height="10"><rect class="status-${run.status}" x="${left.toFixed(1)}" y="1" height="8" width="${Math.max(2, ((end - start) / span) * 220).toFixed(1)}"><title>${run.events[0]?.timestamp ?? ""} to ${run.events.at(-1)?.timestamp ?? ""}</title></rect></svg></td>
<td class="task" title="${run.task ?? ""}">${run.task ?? ""}</td></tr>
`;
  })}</tbody></table>`}`;
  return page(`Delta runs in ${workDirs.join(", ")}`, body);
}
