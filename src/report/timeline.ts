// The bars of a run's timeline: one per recorded model call and one per tool execution, on one time axis.
import type { JournalEvent } from "../journal/events.js";
import type { ModelCall } from "./model-calls.js";
import { timeOf, type RunAccount } from "./run-account.js";

export interface Span {
  kind: "model" | "tool";
  iteration: number;
  label: string;
  /** Epoch ms. */
  start: number;
  durationMs: number;
  /** SUCCESS, FAILED, ERROR for a tool; "unfinished" for a tool the engine never recorded a result for. */
  outcome: string;
  /** The journal event the bar opens (THOUGHT or ACTION_RESULT / ACTION_REQUEST). */
  seq: number;
}

export function timelineOf(account: RunAccount, modelCalls: readonly ModelCall[]): Span[] {
  return [...modelSpans(account, modelCalls), ...toolSpans(account)].sort((a, b) => a.start - b.start || (a.kind === "model" ? -1 : 1));
}

/**
 * Recorded calls as they are; a THOUGHT with no record (io/ pruned, or a record unreadable) gets
 * a bar from the event before it to the THOUGHT itself, which bounds its model call.
 */
function modelSpans(account: RunAccount, modelCalls: readonly ModelCall[]): Span[] {
  const thoughtSeq = new Map(account.iterations.map((iteration) => [iteration.iteration, iteration.thought.seq]));
  const recorded = new Set(modelCalls.map((call) => call.iteration));
  const spans: Span[] = modelCalls.map((call) => ({
    kind: "model",
    iteration: call.iteration,
    label: `model call ${call.iteration}`,
    start: call.start,
    durationMs: call.durationMs,
    outcome: thoughtSeq.has(call.iteration) ? "SUCCESS" : "unrecorded",
    seq: thoughtSeq.get(call.iteration) ?? 0,
  }));
  for (const { iteration, thought } of account.iterations) {
    if (recorded.has(iteration)) continue;
    const end = timeOf(thought);
    const start = timeOf(previous(account.events, thought.seq)) ?? end;
    if (end === null || start === null) continue;
    spans.push({ kind: "model", iteration, label: `model call ${iteration} (timed from the journal)`, start, durationMs: end - start, outcome: "SUCCESS", seq: thought.seq });
  }
  return spans;
}

function toolSpans(account: RunAccount): Span[] {
  const spans: Span[] = [];
  for (const { iteration, actions } of account.iterations) {
    for (const { request, result } of actions) {
      const start = timeOf(request);
      if (start === null) continue;
      const durationMs = result ? result.duration_ms : Math.max(0, (account.endedAt ?? start) - start);
      spans.push({ kind: "tool", iteration, label: request.tool_name, start, durationMs, outcome: result?.status ?? "unfinished", seq: result?.seq ?? request.seq });
    }
  }
  return spans;
}

function previous(events: readonly JournalEvent[], seq: number): JournalEvent | undefined {
  return events[seq - 2];
}
