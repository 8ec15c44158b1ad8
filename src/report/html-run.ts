// The HTML report of one run, failures first: the outcome and its error, the facts, a timeline of every model attempt, tool, wait and hook, tokens per iteration, and every event readable (written as the journal streams past).
import { html, type Html } from "./html-escape.js";
import { timelineSvg, tokensSvg } from "./html-charts.js";
import { eventDetails } from "./html-events.js";
import { pageAround } from "./html-page.js";
import type { JournalEvent } from "../journal/events.js";
import type { HookRun } from "./hook-runs.js";
import type { ModelCall } from "./model-calls.js";
import type { RunAccount } from "./run-account.js";
import { createSensitiveFilter } from "./sensitive-answers.js";
import { formatMs, nextStep } from "./show-text.js";
import { timelineOf } from "./timeline.js";
import { costText, formatTokens } from "./usage-fields.js";
import { counted } from "../plural.js";

/** The run's events in journal order, each handed to `visit`: the journal streamed a second time, or events in hand. */
type EventSource = (visit: (event: JournalEvent) => void) => void;

/**
 * Writes the report piece by piece: the page's head, the outcome, facts and charts (from the account), then one block
 * per event as `events` streams them, then the page's end. The whole page is never one string: a journal of any size
 * gives a report of any size (as large as the journal, and readable as long as the browser copes).
 */
export function writeRunReport(account: RunAccount, modelCalls: readonly ModelCall[], hooks: readonly HookRun[], events: EventSource, write: (text: string) => void): void {
  const { head, tail } = pageAround(`Delta run ${account.runId}`);
  write(head);
  write(summary(account, modelCalls, hooks).text);
  const hideSensitive = createSensitiveFilter();
  events((event) => {
    // The journal may have grown since the account was folded: the list stops where the account did.
    if (event.seq <= account.eventCount) write(eventDetails(hideSensitive(event), account.startedAt).text);
  });
  write(tail);
}

/** Everything above the list of events. */
function summary(account: RunAccount, modelCalls: readonly ModelCall[], hooks: readonly HookRun[]): Html {
  // The account keeps a long run's last iterations only: a bar per call of more would be too thin to see, and the page too large to open.
  const charted = account.iterations;
  const cut = charted.length < account.iterationCount ? charted[0]!.iteration : null;
  const spans = timelineOf(account, modelCalls, hooks).filter((span) => cut === null || span.iteration >= cut);
  const failedAttempts = account.failedAttemptCount;
  const tools = account.toolCalls;
  return html`${outcomeBlock(account)}
<div class="facts">
<span>agent <b>${account.agentName ?? "?"}</b></span>
<span>iterations <b>${account.iterationCount}</b></span>
<span>model calls <b>${account.iterationCount}${failedAttempts > 0 ? html` <span class="status status-FAILED">+ ${failedAttempts} failed attempt${failedAttempts === 1 ? "" : "s"}</span>` : ""}</b></span>
<span>tool calls <b>${tools}</b></span>
<span>tokens <b>${formatTokens(account.usage) ?? "none recorded"}</b></span>
<span>cost <b>${costText(account.usage) ?? "not recorded"}</b></span>
${account.batchUsage === null ? "" : html`<span>of which through batches <b>${formatTokens(account.batchUsage) ?? "none recorded"} · ${costText(account.batchUsage) ?? "cost not recorded"}</b></span>`}
<span>started <b>${account.firstTimestamp ?? "?"}</b></span>
</div>
<div class="facts"><span>workspace <b class="path">${account.workDir}</b></span><span>run dir <b class="path">${account.paths.runDir}</b></span></div>
${account.task === null ? "" : html`<pre class="task">${account.task}</pre>`}
<h2>Timeline</h2>
<p class="legend"><span class="swatch key-model"></span>model call <span class="swatch key-bad"></span>failed attempt or tool <span class="swatch key-wait"></span>waiting (retry, ask_human) <span class="swatch key-tool"></span>tool <span class="swatch key-hook"></span>hook · click a bar for its event</p>
${cut === null ? "" : html`<p class="legend">The charts draw the last ${charted.length} of the run's ${account.iterationCount} iterations (from iteration ${cut}); every event is listed below.</p>`}
<div class="chart">${timelineSvg(spans, { start: cut === null ? account.startedAt : null, end: account.endedAt })}</div>
<h2>Tokens per iteration</h2>
<div class="chart">${tokensSvg(charted)}</div>
<h2>Events</h2>
<p><button type="button" data-expand="all">Expand all</button><button type="button" data-expand="none">Collapse all</button></p>
`;
}

/** The first block a person sees: which run, how it ended, why, and what to type next. */
function outcomeBlock(account: RunAccount): Html {
  const duration = account.startedAt !== null && account.endedAt !== null ? ` after ${formatMs(account.endedAt - account.startedAt)}` : "";
  const iteration = iterationReached(account);
  return html`<header class="outcome outcome-${account.status}" id="outcome">
<h1>Run ${account.runId}</h1>
<p class="verdict"><b class="status status-${account.status}">${account.status}</b>${duration}${iteration}${account.holder?.state === "dead" ? " — its engine is gone: delta continue recovers it" : ""}</p>
${why(account)}
${nextStep(account).map((text) => html`<p class="next">${text}</p>`)}
</header>`;
}

/**
 * How far the run got: its iterations, or for a run that stopped on a model call that never answered, that call's
 * iteration (a FAILED run whose fourth call failed stopped in iteration 4, though only three were answered).
 */
function iterationReached(account: RunAccount): string {
  const lastFailedCall = account.failedAttempts.at(-1)?.iteration ?? 0;
  if (account.status !== "COMPLETED" && lastFailedCall > account.iterationCount) return `, in iteration ${lastFailedCall}, whose model call failed`;
  return account.iterationCount > 0 ? `, ${counted(account.iterationCount, "iteration")}` : "";
}

/** The error of a failed or interrupted run, the open question of a waiting one. */
function why(account: RunAccount): Html | "" {
  if (account.status === "WAITING_FOR_INPUT") return account.waiting ? html`<p class="question">asks: ${account.waiting.prompt}</p>` : "";
  if (account.status === "DEFERRED") return account.deferred ? html`<p class="deferred"><b>${account.deferred.reason}</b> ${account.deferred.message}</p>` : "";
  if (account.status === "COMPLETED" || account.status === "RUNNING") return "";
  const error = account.lastError;
  if (!error) return html`<p class="error">The journal records no error for this run.</p>`;
  return html`<p class="error"><b>${error.error_type}</b> ${error.error_message}</p>`;
}
