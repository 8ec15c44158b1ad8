// The HTML report of one run: its facts, a timeline of model calls and tools, tokens per iteration, and every event expandable.
import type { JournalEvent } from "../journal/events.js";
import { html, type Html } from "./html-escape.js";
import { timelineSvg, tokensSvg } from "./html-charts.js";
import { page } from "./html-page.js";
import type { ModelCall } from "./model-calls.js";
import type { RunAccount } from "./run-account.js";
import { createSensitiveFilter } from "./sensitive-answers.js";
import { formatMs } from "./show-text.js";
import { timelineOf } from "./timeline.js";
import { describeWindowMove } from "./window-move.js";
import { costText, formatUsage } from "./usage-fields.js";

export function runReportHtml(account: RunAccount, modelCalls: readonly ModelCall[]): string {
  const spans = timelineOf(account, modelCalls);
  const origin = account.startedAt;
  const usage = formatUsage(account.usage) ?? "no usage recorded";
  const body = html`<h1>Run ${account.runId}</h1>
<div class="facts">
<span>status <b class="status status-${account.status}">${account.status}</b>${account.holder?.state === "dead" ? " (its engine is gone: delta continue recovers it)" : ""}</span>
<span>agent <b>${account.agentName ?? "?"}</b></span>
<span>iterations <b>${account.iterations.length}</b></span>
<span>duration <b>${account.startedAt !== null && account.endedAt !== null ? formatMs(account.endedAt - account.startedAt) : "?"}</b></span>
<span>tokens <b>${usage}</b></span>
<span>cost <b>${costText(account.usage) ?? "not recorded"}</b></span>
<span>started <b>${account.events[0]?.timestamp ?? "?"}</b></span>
</div>
<div class="facts"><span>workspace <b>${account.workDir}</b></span></div>
${account.task === null ? "" : html`<pre class="task">${account.task}</pre>`}
<h2>Timeline</h2>
<p class="legend"><span class="swatch" style="background:var(--model)"></span>model call <span class="swatch" style="background:var(--tool)"></span>tool <span class="swatch" style="background:var(--bad)"></span>failed or unfinished tool · click a bar for its event</p>
${timelineSvg(spans)}
<h2>Tokens per iteration</h2>
${tokensSvg(account.iterations)}
<h2>Events</h2>
<p><button type="button" data-expand="all">Expand all</button><button type="button" data-expand="none">Collapse all</button></p>
${account.events.map(createSensitiveFilter()).map((event) => eventDetails(event, origin))}`;
  return page(`Delta run ${account.runId}`, body);
}

function eventDetails(event: JournalEvent, origin: number | null): Html {
  const at = Date.parse(event.timestamp);
  const offset = origin === null || Number.isNaN(at) ? "" : `+${formatMs(at - origin)}`;
  return html`<details class="event type-${event.type}" id="event-${event.seq}"><summary><span class="seq">#${event.seq} ${offset}</span><span class="type">${event.type}</span>${summaryOf(event)}</summary><pre>${JSON.stringify(event, null, 2)}</pre></details>
`;
}

function summaryOf(event: JournalEvent): string {
  switch (event.type) {
    case "ENGINE_START":
      return `engine ${event.engine_version}`;
    case "USER_MESSAGE":
      return event.content.slice(0, 200);
    case "THOUGHT":
      return `[${event.iteration}] ${event.tool_calls.length > 0 ? `calls ${event.tool_calls.map((call) => call.name).join(", ")}` : (event.content ?? "").slice(0, 200)}`;
    case "ACTION_REQUEST":
      return `[${event.iteration}] ${event.tool_name} ${JSON.stringify(event.tool_args ?? null).slice(0, 200)}`;
    case "ACTION_RESULT":
      return `[${event.iteration}] ${event.tool_name} ${event.status} · exit ${event.exit_code ?? "-"} · ${formatMs(event.duration_ms)}`;
    case "HUMAN_INPUT_REQUEST":
      return event.prompt.slice(0, 200);
    case "HUMAN_INPUT_RECEIVED":
      return "answer received";
    case "ERROR":
      return `${event.error_type}: ${event.error_message.slice(0, 200)}`;
    case "CONTEXT_WINDOW":
      return `[${event.iteration}] ${describeWindowMove(event)}`;
    case "ENGINE_END":
      return `${event.status} after iteration ${event.final_iteration}`;
  }
}
