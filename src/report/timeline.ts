// The bars of a run's timeline: every model attempt (failed ones and the waits after them included), tool call, ask_human wait and hook, on one time axis.
import type { EventOf } from "../journal/events.js";
import type { HookRun } from "./hook-runs.js";
import type { ModelCall } from "./model-calls.js";
import { timeOf, type RunAccount } from "./run-account.js";

type SpanKind = "model" | "tool" | "ask" | "hook" | "wait";

export interface Span {
  kind: SpanKind;
  iteration: number;
  label: string;
  /** Epoch ms. */
  start: number;
  durationMs: number;
  /**
   * SUCCESS or FAILED for a model attempt; SUCCESS, FAILED, ERROR for a tool, "unfinished" for one
   * the engine never recorded a result for; "waiting" or "answered" for ask_human; a hook's outcome.
   */
  outcome: string;
  /** The journal event the bar opens (THOUGHT, LLM_ATTEMPT_FAILED, ACTION_RESULT / ACTION_REQUEST); 0 for a hook. */
  seq: number;
}

/** `modelCalls` (io/invocations/) time THOUGHTs journaled before THOUGHT kept its own start and duration. */
export function timelineOf(account: RunAccount, modelCalls: readonly ModelCall[], hooks: readonly HookRun[] = []): Span[] {
  const spans = [...modelSpans(account, modelCalls), ...toolSpans(account), ...hooks.map(hookSpan)];
  return spans.sort((a, b) => a.start - b.start || order(a) - order(b));
}

const ORDER: Record<SpanKind, number> = { hook: 0, model: 1, wait: 2, tool: 3, ask: 3 };
function order(span: Span): number {
  return ORDER[span.kind];
}

function modelSpans(account: RunAccount, modelCalls: readonly ModelCall[]): Span[] {
  const spans: Span[] = [];
  /** Where the next answered attempt of each iteration can start: after the last failed attempt's wait. */
  const retryEnds = new Map<number, number>();
  const recorded = new Map(modelCalls.map((call) => [call.iteration, call]));
  // Failed attempts and THOUGHTs in journal order, as the account keeps them apart.
  const calls = [...account.failedAttempts, ...account.iterations.map(({ thought }) => thought)].sort((a, b) => a.seq - b.seq);
  for (const event of calls) {
    if ("attempt" in event) {
      const start = Date.parse(event.started_at);
      if (Number.isNaN(start)) continue;
      spans.push({ kind: "model", iteration: event.iteration, label: failedLabel(event), start, durationMs: event.duration_ms, outcome: "FAILED", seq: event.seq });
      const waitStart = start + event.duration_ms;
      if (event.retry_in_ms !== null) {
        spans.push({ kind: "wait", iteration: event.iteration, label: `waiting ${event.retry_in_ms} ms before attempt ${event.attempt + 1}`, start: waitStart, durationMs: event.retry_in_ms, outcome: "waiting", seq: event.seq });
      }
      retryEnds.set(event.iteration, waitStart + (event.retry_in_ms ?? 0));
    } else {
      const call = answeredCall(event, recorded.get(event.iteration), retryEnds.get(event.iteration));
      if (call === null) continue;
      const attempts = event.attempts !== undefined && event.attempts > 1 ? ` (attempt ${event.attempts})` : "";
      spans.push({ kind: "model", iteration: event.iteration, label: `model call ${event.iteration}${attempts}${call.guessed ? " (timed from the journal)" : ""}`, start: call.start, durationMs: call.durationMs, outcome: "SUCCESS", seq: event.seq });
      retryEnds.delete(event.iteration);
    }
  }
  return spans;
}

/**
 * The attempt that answered: from the THOUGHT's own timing (after any failed attempt and its
 * wait); for an older journal from its io record, or from the event before it to the THOUGHT itself.
 */
function answeredCall(thought: RunAccount["iterations"][number]["thought"], record: ModelCall | undefined, retryEnd: number | undefined): { start: number; durationMs: number; guessed: boolean } | null {
  const callStart = thought.started_at === undefined ? NaN : Date.parse(thought.started_at);
  if (!Number.isNaN(callStart) && thought.duration_ms !== undefined) {
    const end = callStart + thought.duration_ms;
    const start = retryEnd === undefined ? callStart : Math.min(end, Math.max(callStart, retryEnd));
    return { start, durationMs: end - start, guessed: false };
  }
  if (record) return { start: record.start, durationMs: record.durationMs, guessed: false };
  const end = timeOf(thought);
  const start = (thought.previousTimestamp === null ? null : timeOf({ timestamp: thought.previousTimestamp })) ?? end;
  return end === null || start === null ? null : { start, durationMs: end - start, guessed: true };
}

function failedLabel(event: EventOf<"LLM_ATTEMPT_FAILED">): string {
  const words = event.server_message === undefined ? "" : `: ${event.server_message}`;
  return `model call ${event.iteration}, attempt ${event.attempt} failed: ${event.reason}${words}`;
}

/** Tools by their request and result; an ask_human call is a wait for a person, from the question to the answer. */
function toolSpans(account: RunAccount): Span[] {
  const spans: Span[] = [];
  for (const { iteration, actions } of account.iterations) {
    for (const { request, result } of actions) {
      const start = timeOf(request);
      if (start === null) continue;
      if (request.tool_name === "ask_human") {
        const end = result ? (timeOf(result) ?? start) : (account.endedAt ?? start);
        spans.push({ kind: "ask", iteration, label: result ? "ask_human: waiting for an answer" : "ask_human: still waiting for an answer", start, durationMs: Math.max(0, end - start), outcome: result ? "answered" : "waiting", seq: result?.seq ?? request.seq });
        continue;
      }
      const durationMs = result ? result.duration_ms : Math.max(0, (account.endedAt ?? start) - start);
      spans.push({ kind: "tool", iteration, label: request.tool_name, start, durationMs, outcome: result?.status ?? "unfinished", seq: result?.seq ?? request.seq });
    }
  }
  return spans;
}

function hookSpan(hook: HookRun): Span {
  return { kind: "hook", iteration: hook.iteration, label: `hook ${hook.hook}`, start: hook.start, durationMs: hook.durationMs, outcome: hook.outcome, seq: 0 };
}
