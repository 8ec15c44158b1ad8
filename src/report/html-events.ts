// The report's list of journal events: a one-line summary each, and a body that reads as `delta show` prints it (long outputs folded, the journal line one click away).
import { describeJournaledSandbox } from "../process/sandbox/policy-schema.js";
import { forkedFromText } from "./forked-from.js";
import shellQuote from "shell-quote";
import type { EventOf, JournalEvent } from "../journal/events.js";
import { html, type Html } from "./html-escape.js";
import { describeHookResult, formatMs } from "./show-text.js";
import { describeReplayDivergence } from "../journal/replay-divergence.js";
import { describeBatchedCall } from "../journal/batched-call.js";
import { describeWindowMove } from "../journal/window-move.js";
import { formatUsage, usageNumbers } from "./usage-fields.js";

/** Lines of a tool's output shown before the rest is folded away. */
const SHOWN_LINES = 20;
const SUMMARY_CHARS = 200;

export function eventDetails(event: JournalEvent, origin: number | null): Html {
  const at = Date.parse(event.timestamp);
  const offset = origin === null || Number.isNaN(at) ? "" : `+${formatMs(at - origin)}`;
  return html`<details class="event type-${event.type}" id="event-${event.seq}"><summary><span class="seq">#${event.seq} ${offset}</span> <span class="type">${event.type}</span> <span class="gist">${summaryOf(event)}</span></summary>
<div class="body">${bodyOf(event)}<details class="raw"><summary>journal line</summary><pre>${JSON.stringify(event, null, 2)}</pre></details></div></details>
`;
}

function summaryOf(event: JournalEvent): Html | string {
  switch (event.type) {
    case "ENGINE_START":
      return `engine ${event.engine_version}, model ${event.config.model ?? "?"}, sandbox ${describeJournaledSandbox(event.config.sandbox)}${forkedFromText(event)}`;
    case "USER_MESSAGE":
      return oneLine(event.content);
    case "THOUGHT": {
      const calls = event.tool_calls.length > 0 ? html` <span class="dim">&rarr; ${event.tool_calls.map((call) => call.name).join(", ")}</span>` : "";
      const words = event.content === null || event.content.trim() === "" ? html`<span class="dim">(no text)</span>` : oneLine(event.content);
      return html`[${event.iteration}] ${words}${calls}`;
    }
    case "LLM_ATTEMPT_FAILED":
      return html`[${event.iteration}] attempt ${event.attempt} <span class="status status-FAILED">failed</span>: ${attemptText(event)}`;
    case "ACTION_REQUEST":
      return `[${event.iteration}] ${event.tool_name} ${oneLine(JSON.stringify(event.tool_args ?? null))}`;
    case "ACTION_RESULT":
      return html`[${event.iteration}] ${event.tool_name} <span class="status status-${event.status}">${event.status}</span> · ${event.exit_code === null ? "no exit code" : `exit ${event.exit_code}`} · ${formatMs(event.duration_ms)}`;
    case "HUMAN_INPUT_REQUEST":
      return oneLine(event.prompt);
    case "HUMAN_INPUT_RECEIVED":
      return "answer received";
    case "ERROR":
      return html`<span class="status status-ERROR">${event.error_type}</span>: ${oneLine(event.error_message)}`;
    case "CONTEXT_WINDOW":
      return `[${event.iteration}] ${describeWindowMove(event)}`;
    case "HOOK_RESULT":
      return `[${event.iteration}] ${describeHookResult(event)}`;
    case "REPLAY_DIVERGED":
      return describeReplayDivergence(event);
    case "MODEL_QUEUED":
    case "MODEL_SUBMITTED":
      return `[${event.iteration}] ${describeBatchedCall(event)}`;
    case "ENGINE_END":
      return html`<span class="status status-${event.status}">${event.status}</span> after iteration ${event.final_iteration}`;
    default: {
      const unknown: never = event;
      return JSON.stringify(unknown);
    }
  }
}

function bodyOf(event: JournalEvent): Html {
  switch (event.type) {
    case "THOUGHT":
      return thoughtBody(event);
    case "ACTION_REQUEST":
      return html`${facts([["tool", event.tool_name], ["command", event.resolved_command === null ? "none (not bound to a command)" : shellQuote.quote(event.resolved_command)]])}<pre class="text">${pretty(event.tool_args)}</pre>`;
    case "ACTION_RESULT":
      return html`${facts([["tool", event.tool_name], ["status", html`<span class="status status-${event.status}">${event.status}</span>`], ["exit code", event.exit_code === null ? "none" : String(event.exit_code)], ["took", formatMs(event.duration_ms)]])}${folded(event.observation_content)}`;
    case "LLM_ATTEMPT_FAILED":
      return facts([
        ["attempt", String(event.attempt)],
        ["started", event.started_at],
        ["took", formatMs(event.duration_ms)],
        ["failure", event.reason],
        ...(event.http_status !== undefined ? [["HTTP status", String(event.http_status)] as const] : []),
        ...(event.server_message !== undefined ? [["server said", event.server_message] as const] : []),
        ...(event.server_code !== undefined ? [["code", event.server_code] as const] : []),
        ["then", event.retry_in_ms === null ? "no retry" : `retried after ${formatMs(event.retry_in_ms)}`],
      ]);
    case "USER_MESSAGE":
      return html`<pre class="text">${event.content}</pre>`;
    case "HUMAN_INPUT_REQUEST":
      return html`${facts([["input", event.input_type], ["sensitive", event.sensitive ? "yes" : "no"]])}<pre class="text">${event.prompt}</pre>`;
    case "HUMAN_INPUT_RECEIVED":
      return html`<pre class="text">${event.response}</pre>`;
    case "ERROR":
      return html`${facts([["type", event.error_type]])}<pre class="text error-text">${event.error_message}</pre>`;
    case "HOOK_RESULT":
      return facts([["hook", event.hook], ["outcome", event.outcome], ["exit code", event.exit_code === null ? "none" : String(event.exit_code)], ["took", formatMs(event.duration_ms)], ["record", event.record]]);
    case "REPLAY_DIVERGED":
      return facts([["recorded call", String(event.recorded_call)], ["source", event.source], ...event.parts.map((part) => [part.part, part.summary] as const)]);
    case "ENGINE_START":
    case "CONTEXT_WINDOW":
    case "MODEL_QUEUED":
    case "MODEL_SUBMITTED":
    case "ENGINE_END":
      return html``;
    default: {
      const unknown: never = event;
      return html`${JSON.stringify(unknown)}`;
    }
  }
}

function thoughtBody(event: EventOf<"THOUGHT">): Html {
  const timing = event.duration_ms === undefined ? "not recorded" : `${formatMs(event.duration_ms)}${event.attempts !== undefined && event.attempts > 1 ? ` over ${event.attempts} attempts` : ""}`;
  const by = event.answered_by;
  const answered = by === undefined ? [] : [["provider", `${by.provider} ${by.base_url}`] as const, ...(by.model !== event.model ? [["asked", by.model] as const] : [])];
  const dropped = event.reasoning_dropped === undefined ? [] : [["reasoning", `not sent: ${event.reasoning_dropped} earlier repl${event.reasoning_dropped === 1 ? "y" : "ies"} by another endpoint`] as const];
  return html`${facts([["model", event.model], ...answered, ...dropped, ["call", timing], ["tokens", formatUsage(usageNumbers(event.usage)) ?? "not recorded"], ...(event.finish_reason !== undefined ? [["finish", event.finish_reason] as const] : [])])}
${event.content === null || event.content === "" ? "" : html`<pre class="text">${event.content}</pre>`}
${event.reasoning === undefined ? "" : html`<details class="reasoning"><summary>reasoning</summary><pre class="text">${event.reasoning}</pre></details>`}
${event.tool_calls.map((call) => html`<div class="call"><b>${call.name}</b> <span class="dim">${call.id}</span><pre class="text">${prettyText(call.arguments)}</pre></div>`)}`;
}

/** The head of a long text, and the whole of it one click away. */
function folded(text: string): Html {
  if (text === "") return html`<p class="dim">(no output)</p>`;
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length <= SHOWN_LINES) return html`<pre class="text output">${text}</pre>`;
  return html`<pre class="text output">${lines.slice(0, SHOWN_LINES).join("\n")}</pre><details class="whole"><summary>all ${lines.length} lines</summary><pre class="text output">${text}</pre></details>`;
}

function facts(pairs: readonly (readonly [string, Html | string])[]): Html {
  return html`<dl class="fields">${pairs.map(([name, value]) => html`<dt>${name}</dt><dd>${value}</dd>`)}</dl>`;
}

function attemptText(event: EventOf<"LLM_ATTEMPT_FAILED">): string {
  const words = event.server_message === undefined ? "" : ` ${JSON.stringify(event.server_message)}`;
  return `${event.reason}${words} · ${event.retry_in_ms === null ? "not retried" : `retry in ${formatMs(event.retry_in_ms)}`}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS)}…` : flat;
}

function pretty(value: unknown): string {
  return JSON.stringify(value ?? null, null, 2);
}

/** A model's arguments string: indented when it is JSON, as written when it is not. */
function prettyText(text: string): string {
  try {
    return pretty(JSON.parse(text));
  } catch {
    return text;
  }
}
