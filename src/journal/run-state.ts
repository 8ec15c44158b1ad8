// What a journal says about its run: status, iteration count, usage and the work left unfinished.
import { OUTPUT_INVALID } from "../errors.js";
import type { Deferred, EventOf, JournalEvent, RunStatus, ToolCall } from "./events.js";
import { createFoldTracker, type EventFold, type FoldTracker } from "./fold.js";
import { foldJournal } from "./reader.js";
import { copyUsageTotals, usageFold, type BudgetCharged, type RunUsage, type UsageTotals } from "./usage-totals.js";

interface PendingCall {
  call: ToolCall;
  iteration: number;
  /** Its place among the THOUGHT's tool calls (what tells apart two calls of one reply that share an id). */
  index: number;
  /**
   * The seq of the call's ACTION_REQUEST, or null when none was recorded. Recorded, the tool may have started, so it must
   * not run again; a leftover tool's process group names the request it ran for by this seq.
   */
  requestSeq: number | null;
  /** An ask_human call whose answer was recorded (HUMAN_INPUT_RECEIVED) before its result could be: the answer. */
  answer: string | null;
}

/**
 * The model call of the next iteration, queued for the provider's batch API and not yet answered: its MODEL_QUEUED, and
 * the submission that sent it (null while only queued, or after the provider refused the submission).
 */
export interface BatchedCall {
  queued: EventOf<"MODEL_QUEUED">;
  submitted: EventOf<"MODEL_SUBMITTED"> | null;
}

export interface RunState {
  status: RunStatus;
  /** Number of THOUGHT events: the iteration the next model call will have is this + 1. */
  iterations: number;
  /** Tool calls of the last THOUGHT that have no ACTION_RESULT yet, in the model's order. */
  pending: PendingCall[];
  /** The open ask_human question, when the run waits for a human. */
  waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null;
  lastThought: EventOf<"THOUGHT"> | null;
  /**
   * The last THOUGHT when it is a reply without tool calls that no invocation ended on: no message follows it, nor a
   * COMPLETED end, nor an OUTPUT_INVALID error — only engine records (an INTERRUPTED end, the janitor's or a signal's;
   * an engine error; a new ENGINE_START; hook outcomes). The engine stopped between the answer and the run's end;
   * `iterationEndRan` says whether its on_iteration_end hook's outcome was journaled.
   */
  openAnswer: { thought: EventOf<"THOUGHT">; iterationEndRan: boolean } | null;
  lastError: EventOf<"ERROR"> | null;
  /** With status DEFERRED: what the run waits for, as its last ENGINE_END says. */
  deferred: Deferred | null;
  /** The run's usage, and per model as the THOUGHTs name it; each call priced with its own process's llm.pricing. */
  usage: { total: UsageTotals; byModel: Map<string, UsageTotals>; batch: UsageTotals; charged: BudgetCharged };
  initialMessage: string | null;
  /** The next iteration's model call when it waits in a batch; null once a THOUGHT answered it, a failed attempt ended it or a message superseded it. */
  batched: BatchedCall | null;
}

/** What folding the journal so far has gathered; RunState is computed from it. */
interface Fold {
  status: RunStatus;
  deferred: Deferred | null;
  iterations: number;
  lastThought: EventOf<"THOUGHT"> | null;
  lastError: EventOf<"ERROR"> | null;
  waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null;
  initialMessage: string | null;
  /** Calls of the last THOUGHT with an ACTION_REQUEST (the request's seq by call id), and with an ACTION_RESULT. */
  requested: Map<string, number>;
  answered: Set<string>;
  /** Human answers recorded for calls of the last THOUGHT, by call id. */
  received: Map<string, string>;
  /** Since the last THOUGHT: a message was added, or an invocation ended on it (COMPLETED, or FAILED because the answer did not meet its schema). */
  concluded: boolean;
  /** Since the last THOUGHT: its on_iteration_end hook's outcome was journaled. */
  iterationEndRan: boolean;
  batched: BatchedCall | null;
}

/** Registers the run state's folds (its status and calls, and the usage fold) on `tracker`; returns the state after the events it has seen. */
export function trackRunState(tracker: FoldTracker): () => RunState {
  const fold = tracker.register(statusFold);
  const usage = tracker.register(usageFold);
  return () => stateOf(fold(), usage());
}

/** The run's state of the journal at `path`, streamed: a line's memory, whatever the journal's size. */
export function readRunState(path: string, options: { warn?: (line: string) => void } = {}): RunState {
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  foldJournal(path, tracker, options);
  return state();
}

/** The run's status and pending calls, folded event by event; the journal is the authority over metadata.json. */
const statusFold: EventFold<Fold> = { initial: emptyFold, step: foldEvent };

function emptyFold(): Fold {
  return {
    status: "RUNNING",
    deferred: null,
    iterations: 0,
    lastThought: null,
    lastError: null,
    waiting: null,
    initialMessage: null,
    requested: new Map(),
    answered: new Set(),
    received: new Map(),
    concluded: false,
    iterationEndRan: false,
    batched: null,
  };
}

function foldEvent(fold: Fold, event: JournalEvent): Fold {
  switch (event.type) {
    case "ENGINE_START":
      fold.status = "RUNNING";
      fold.deferred = null;
      break;
    case "USER_MESSAGE":
      fold.initialMessage ??= event.content;
      fold.concluded = true;
      // A message changes the request: a queued call that does not hold it is dropped, and the next iteration asks anew.
      fold.batched = null;
      break;
    case "THOUGHT": {
      fold.iterations += 1;
      fold.lastThought = event;
      fold.requested.clear();
      fold.answered.clear();
      fold.received.clear();
      fold.concluded = false;
      fold.iterationEndRan = false;
      fold.batched = null;
      break;
    }
    case "ACTION_REQUEST":
      fold.requested.set(event.action_id, event.seq);
      break;
    case "ACTION_RESULT":
      fold.answered.add(event.action_id);
      if (fold.waiting?.action_id === event.action_id) fold.waiting = null;
      break;
    case "HUMAN_INPUT_REQUEST":
      fold.waiting = event;
      break;
    case "HUMAN_INPUT_RECEIVED":
      fold.received.set(event.action_id, event.response);
      if (fold.waiting?.request_id === event.request_id) fold.waiting = null;
      break;
    case "ERROR":
      fold.lastError = event;
      if (event.error_type === OUTPUT_INVALID) fold.concluded = true;
      break;
    case "ENGINE_END":
      fold.status = event.status;
      fold.deferred = event.status === "DEFERRED" ? (event.deferred ?? { reason: "UNKNOWN", resume_after: null, message: "The run was deferred." }) : null;
      // Only a COMPLETED end, or an answer refused by its schema (above), decided what the last reply meant: an interrupted
      // end (a signal, the janitor's for a dead engine) or an engine error did not.
      if (event.status === "COMPLETED") fold.concluded = true;
      break;
    case "HOOK_RESULT":
      if (event.hook === "on_iteration_end" && event.iteration === fold.lastThought?.iteration) fold.iterationEndRan = true;
      break;
    case "MODEL_QUEUED":
      fold.batched = { queued: event, submitted: null };
      break;
    case "MODEL_SUBMITTED":
      if (fold.batched?.queued.custom_id === event.custom_id) fold.batched = { ...fold.batched, submitted: event.failed === undefined ? event : null };
      break;
    case "LLM_ATTEMPT_FAILED":
      // A batched call's result that failed (errored, expired, cancelled) ends that call: the next continue queues a new one.
      if (fold.batched?.queued.iteration === event.iteration) fold.batched = null;
      break;
    case "CONTEXT_WINDOW":
    case "REPLAY_DIVERGED":
      // None changes the run's state: a failed attempt is a record of a call, a window move a record of the context, a divergence a record of a replay.
      break;
    default: {
      const unknown: never = event;
      throw new Error(`run state: unhandled event ${JSON.stringify(unknown)}`);
    }
  }
  return fold;
}

/** A RunState of its own: the folds may go on growing after it is returned. */
function stateOf(fold: Fold, runUsage: RunUsage): RunState {
  const { status, deferred, iterations, waiting, lastThought, lastError, initialMessage, batched } = fold;
  const pending: PendingCall[] = [];
  for (const [index, call] of (lastThought?.tool_calls ?? []).entries()) {
    if (fold.answered.has(call.id)) continue;
    pending.push({ call, iteration: lastThought!.iteration, index, requestSeq: fold.requested.get(call.id) ?? null, answer: fold.received.get(call.id) ?? null });
  }
  const openAnswer = lastThought !== null && lastThought.tool_calls.length === 0 && !fold.concluded ? { thought: lastThought, iterationEndRan: fold.iterationEndRan } : null;
  const byModel = new Map([...runUsage.byModel].map(([model, totals]) => [model, copyUsageTotals(totals)]));
  const usage = { total: copyUsageTotals(runUsage.total), byModel, batch: copyUsageTotals(runUsage.batch), charged: { ...runUsage.charged } };
  return { status, deferred, iterations, pending, waiting, lastThought, openAnswer, lastError, usage, initialMessage, batched };
}
