// A run as text for a person: a header, one block per journal event (shared by `show` and `show --follow`), and a footer.
import { describeJournaledSandbox } from "../process/sandbox/policy-schema.js";
import { forkedFromText } from "./forked-from.js";
import { terminalSafe } from "../terminal-text.js";
import shellQuote from "shell-quote";
import type { EventOf, JournalEvent, RunStatus } from "../journal/events.js";
import type { JournaledPrices } from "../journal/usage-totals.js";
import { continueCommand } from "../continue-command.js";
import type { RunAccount } from "./run-account.js";
import { createSensitiveFilter } from "./sensitive-answers.js";
import type { TextStyle } from "./text-style.js";
import { shownUsage } from "./priced-usage.js";
import { describeReplayDivergence } from "../journal/replay-divergence.js";
import { describeBatchedCall } from "../journal/batched-call.js";
import { describeWindowMove } from "../journal/window-move.js";
import { costText, formatUsage } from "./usage-fields.js";
import { counted } from "../plural.js";

/** Observation lines shown under a tool result; the full output is in the journal and io/tool_executions/. */
const OBSERVATION_LINES = 4;
const LINE_WIDTH = 160;
/** Width of the `+12.3s` column; with the 6-wide tag and two spaces, text starts at column INDENT. */
const CLOCK = 8;
const INDENT = CLOCK + 8;

export function runHeader(account: RunAccount, style: TextStyle): string[] {
  const lines = [`${style.bold(`Run ${account.runId}`)}  ${statusText(account, style)}`];
  if (account.agentName) lines.push(`${style.dim("agent    ")} ${terminalSafe(account.agentName)}`);
  lines.push(`${style.dim("run dir  ")} ${account.paths.runDir}`);
  const trace = account.trace;
  if (trace) lines.push(`${style.dim("trace    ")} ${trace.traceId}`);
  return lines;
}

/** Turns journal events into text blocks, one event at a time, so a follower prints as the journal grows. */
/** `full`: thoughts and observations whole, as `show --full` prints them. */
export function createEventFormatter(style: TextStyle, { full = false }: { full?: boolean } = {}): (event: JournalEvent) => string[] {
  let origin: number | null = null;
  let tasksSeen = 0;
  /** The ACTION_REQUEST printed just before, whose result needs no name repeated. */
  let requestAbove: string | null = null;
  /** The pricing of the process whose calls follow: each ENGINE_START names its own. */
  let prices: JournaledPrices = {};
  /** The model and endpoint the process whose calls follow asked first: a THOUGHT another answered names its own. */
  let primary: EventOf<"ENGINE_START">["config"] | undefined;
  const hideSensitive = createSensitiveFilter();
  return (untrusted) => {
    const event = printableEvent(hideSensitive(untrusted));
    const at = Date.parse(event.timestamp);
    origin ??= Number.isNaN(at) ? null : at;
    const clock = style.dim(origin === null || Number.isNaN(at) ? " ".repeat(CLOCK) : `+${formatSeconds(at - origin)}`.padStart(CLOCK));
    const line = (tag: string, text: string): string => `${clock} ${tag} ${text}`;
    const resultOf = requestAbove;
    requestAbove = event.type === "ACTION_REQUEST" ? event.action_id : null;
    switch (event.type) {
      case "ENGINE_START":
        prices = event.config;
        primary = event.config;
        return [line(style.dim("start "), style.dim(`engine ${event.engine_version}, model ${event.config.model ?? "?"}, pid ${event.config.pid ?? "?"}, sandbox ${describeJournaledSandbox(event.config.sandbox)}${forkedFromText(event)}`))];
      case "USER_MESSAGE":
        if (event.source === "engine") return [line(style.yellow("engine"), indentRest(event.content))];
        tasksSeen += 1;
        return [line(style.cyan(tasksSeen === 1 ? "task  " : "user  "), indentRest(event.content))];
      case "THOUGHT":
        return thoughtLines(event, prices, primary, style, line, full);
      case "LLM_ATTEMPT_FAILED":
        return [line(style.bold(`[${event.iteration}]`.padEnd(6)), attemptText(event, style))];
      case "ACTION_REQUEST":
        return [line(style.bold(`[${event.iteration}] `.padEnd(6)), `${style.bold(event.tool_name)} ${clip(compactJson(event.tool_args))}${event.rerun_of === undefined ? "" : style.dim(` · run again with the same idempotency key (the request at seq ${event.rerun_of} got no result)`)}`)];
      case "ACTION_RESULT":
        // A result recorded later (after a crash and a restart) names its tool again.
        return resultLines(event, style, line, resultOf === event.action_id ? "" : `${style.bold(event.tool_name)} `, full);
      case "HUMAN_INPUT_REQUEST":
        return [line(style.yellow("ask   "), indentRest(event.prompt))];
      case "HUMAN_INPUT_RECEIVED":
        return [line(style.yellow("answer"), indentRest(event.response))];
      case "ERROR":
        return [line(style.red("error "), `${event.error_type}: ${indentRest(event.error_message)}`)];
      case "CONTEXT_WINDOW":
        return [line(style.dim("window"), style.dim(describeWindowMove(event)))];
      case "HOOK_RESULT":
        return [line(style.dim("hook  "), event.outcome === "continue" ? style.dim(describeHookResult(event)) : style.yellow(describeHookResult(event)))];
      case "REPLAY_DIVERGED":
        return [line(style.yellow("replay"), describeReplayDivergence(event))];
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
        return [line(style.dim("batch "), describeBatchedCall(event))];
      case "ENGINE_END":
        return [line(style.dim("end   "), `${colourStatus(event.status, style)} after iteration ${event.final_iteration}`)];
      default: {
        const unknown: never = event;
        return [line("      ", JSON.stringify(unknown))];
      }
    }
  };
}

const HOOK_OUTCOMES = { continue: "ok", block: "blocked", failed_open: "failed (the run went on)" } as const;

/** `pre_tool_execution hook blocked · exit 2 · 12ms · io/hooks/pre_tool_execution_….json`, for show and the HTML report. */
export function describeHookResult(event: EventOf<"HOOK_RESULT">): string {
  const exit = event.timed_out ? "timed out" : event.exit_code === null ? "no exit code" : `exit ${event.exit_code}`;
  return `${event.hook} hook ${HOOK_OUTCOMES[event.outcome]} · ${exit} · ${formatMs(event.duration_ms)} · ${event.record}`;
}

/** `model attempt 2 failed · HTTP 500 "overloaded" · 12 ms · retry in 1.0s`. */
function attemptText(event: EventOf<"LLM_ATTEMPT_FAILED">, style: TextStyle): string {
  const words = event.server_message === undefined ? "" : ` ${JSON.stringify(event.server_message)}`;
  const then = event.retry_in_ms === null ? "not retried" : `retry in ${formatMs(event.retry_in_ms)}`;
  return `${style.red(`model attempt ${event.attempt} failed`)} · ${clip(`${event.reason}${words}`)} · ${formatMs(event.duration_ms)} · ${then}`;
}

type Line = (tag: string, text: string) => string;

function thoughtLines(event: EventOf<"THOUGHT">, prices: JournaledPrices, primary: EventOf<"ENGINE_START">["config"] | undefined, style: TextStyle, line: Line, full: boolean): string[] {
  const usage = formatUsage(shownUsage(event, prices));
  const call = event.duration_ms === undefined ? "" : `${formatMs(event.duration_ms)}${event.attempts !== undefined && event.attempts > 1 ? ` (attempt ${event.attempts})` : ""}`;
  const meta = style.dim([answeredBy(event, primary), call, usage].filter(Boolean).join(" · "));
  const tag = style.bold(`[${event.iteration}]`.padEnd(6));
  if (event.content === null || event.content === "") return [line(tag, meta)];
  // A reply without tool calls is the run's answer: shown whole. Reasoning before tool calls is clipped.
  const text = event.tool_calls.length === 0 || full ? indentRest(event.content) : clip(event.content.replace(/\s+/g, " ").trim());
  return [line(tag, meta), line(" ".repeat(6), text)];
}

/** The model that answered; its provider and endpoint when a fallback answered, and a note when other endpoints' reasoning was left out of the request. */
function answeredBy(event: EventOf<"THOUGHT">, primary: EventOf<"ENGINE_START">["config"] | undefined): string {
  const by = event.answered_by;
  const dropped = event.reasoning_dropped === undefined ? "" : `, reasoning of ${event.reasoning_dropped} earlier repl${event.reasoning_dropped === 1 ? "y" : "ies"} not sent`;
  const asPrimary = by !== undefined && by.model === primary?.model && by.provider === primary.endpoint?.provider && by.base_url === primary.endpoint.base_url;
  return by === undefined || (asPrimary && dropped === "") ? event.model : `${event.model} (${asPrimary ? "" : "fallback: "}${by.provider} ${by.base_url}${dropped})`;
}

function resultLines(event: EventOf<"ACTION_RESULT">, style: TextStyle, line: Line, name: string, full: boolean): string[] {
  const status = event.status === "SUCCESS" ? style.green(event.status) : style.red(event.status);
  const facts = [status, event.exit_code === null ? "no exit code" : `exit ${event.exit_code}`, formatMs(event.duration_ms)].join(" · ");
  const observation = event.observation_content.replace(/\n$/, "").split("\n");
  const kept = full ? observation : observation.slice(0, OBSERVATION_LINES);
  const shown = kept.map((text) => `${" ".repeat(INDENT)}${style.dim("│")} ${full ? text : clip(text)}`);
  // The lines not printed are counted in the tool's whole output, not in the part of it the observation kept.
  const more = Math.max(event.output_lines ?? 0, observation.length) - kept.length;
  if (more > 0) shown.push(`${" ".repeat(INDENT)}${style.dim(`│ … ${more} more lines${full ? " in io/tool_executions/" : ""}`)}`);
  if (event.observation_content === "") shown.length = 0;
  return [line(" ".repeat(6), `→ ${name}${facts}`), ...shown];
}

/** Totals, the outcome, and the command that goes on from here. */
export function runFooter(account: RunAccount, style: TextStyle): string[] {
  const usage = formatUsage(account.usage) ?? "no usage recorded";
  const cost = costText(account.usage) === null ? " · cost not recorded" : "";
  const duration = account.startedAt !== null && account.endedAt !== null ? `${formatMs(account.endedAt - account.startedAt)}, ` : "";
  return [
    `${style.bold("total")}   ${duration}${counted(account.iterationCount, "iteration")} · ${usage}${cost}`,
    ...(account.batchUsage === null ? [] : [`${style.bold("batch")}   ${formatUsage(account.batchUsage) ?? "no usage recorded"} (answered through the provider's batch API, at its rate)`]),
    `${style.bold("status")}  ${statusText(account, style)}`,
    ...nextStep(account).map((text) => `${style.bold("next")}    ${text}`),
  ];
}

function statusText(account: RunAccount, style: TextStyle): string {
  if (account.status === "DEFERRED" && account.deferred) return `${colourStatus("DEFERRED", style)} ${terminalSafe(account.deferred.reason)}: ${terminalSafe(account.deferred.message)}`;
  if (account.status !== "RUNNING" || !account.holder) return colourStatus(account.status, style);
  const holder = account.holder;
  if (holder.state === "alive") return `${colourStatus("RUNNING", style)} (engine pid ${account.metadata?.pid ?? "?"} is alive)`;
  if (holder.state === "other-host") return `${colourStatus("RUNNING", style)} (engine on ${terminalSafe(holder.host)}: its heartbeat was not watched; \`delta list-runs --check-liveness\` watches it)`;
  return `${colourStatus("RUNNING", style)} ${style.red(`but its engine is gone (${holder.reason})`)}`;
}

function colourStatus(status: RunStatus, style: TextStyle): string {
  switch (status) {
    case "COMPLETED":
      return style.green(status);
    case "FAILED":
      return style.red(status);
    case "RUNNING":
      return style.cyan(status);
    default:
      return style.yellow(status);
  }
}

/** What a person types next, by status (the state table of `delta continue`). */
export function nextStep(account: RunAccount): string[] {
  const { runId, workDir } = account;
  switch (account.status) {
    case "COMPLETED":
      return [`to go on: ${continueCommand(runId, workDir, "<next instruction>")}`];
    case "WAITING_FOR_INPUT":
      return [`to answer: ${continueCommand(runId, workDir, "<answer>")}`];
    case "FAILED":
      return [`to retry: ${continueCommand(runId, workDir)}`];
    case "INTERRUPTED":
      return [`to resume: ${continueCommand(runId, workDir)}`];
    case "DEFERRED": {
      const due = account.deferred?.resume_after ?? null;
      const when = due === null ? "at once (its time is unknown)" : `from ${due}`;
      return [`to go on: ${continueCommand(runId, workDir)}; \`${shellQuote.quote(["delta", "continue", "--due", "-w", workDir])}\` takes it ${when}`];
    }
    case "RUNNING":
      return account.holder?.state === "dead"
        ? [`to recover: ${continueCommand(runId, workDir)}`]
        : [`to watch: ${shellQuote.quote(["delta", "show", runId, "-w", workDir, "--follow"])}`];
  }
}

function printableEvent(event: JournalEvent): JournalEvent {
  return JSON.parse(JSON.stringify(event), (_key, value: unknown) => (typeof value === "string" ? terminalSafe(value) : value)) as JournalEvent;
}

function compactJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}

function clip(text: string): string {
  return text.length > LINE_WIDTH ? `${text.slice(0, LINE_WIDTH - 1)}…` : text;
}

/** Continuation lines of a multi-line text line up under its first line. */
function indentRest(text: string): string {
  return text.replace(/\n$/, "").replace(/\n/g, `\n${" ".repeat(INDENT)}`);
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${formatSeconds(ms)}`;
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m${String(Math.round(seconds % 60)).padStart(2, "0")}s`;
}
