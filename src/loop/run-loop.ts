// The Think-Act-Observe loop: iterate until the model finishes, a human is needed, or a limit is hit.
import { replyEnding } from "../conversation.js";
import { DeferredError, DeltaError, MAX_ITERATIONS, MODEL_PAUSED, MODEL_REFUSED, MODEL_TRUNCATED, OUTPUT_INVALID, type Deferral } from "../errors.js";
import type { EventOf, JournalEvent } from "../journal/events.js";
import type { ShownJournal } from "../journal/shown-journal.js";
import { act, rerunsSafely } from "./act.js";
import { actionKey } from "./action-key.js";
import { recordAnswerResult } from "./ask-human.js";
import { answersReask, checkFinalAnswer, reaskMessage, unansweredFinalAnswer } from "./final-answer.js";
import type { InteractionRequest, LoopPorts } from "./ports.js";
import { think } from "./think.js";

export type LoopEnd =
  /** `parsed`: the answer's value, when an output schema held it (`result` is then its raw text). */
  | { status: "COMPLETED"; result: string | null; parsed?: { value: unknown } }
  | { status: "WAITING_FOR_INPUT"; request: InteractionRequest }
  | { status: "FAILED"; error: { type: string; message: string } }
  | { status: "INTERRUPTED"; error: { type: string; message: string } }
  /** The next model call must wait for something with a time (a limit's reset, a budget): nothing of it was lost. */
  | { status: "DEFERRED"; deferred: Deferral };

/** Runs iterations until the run leaves RUNNING; each one starts from the journal on disk. */
export async function runLoop(ports: LoopPorts, maxIterations: number): Promise<LoopEnd> {
  try {
    const answered = await finishOpenAnswer(ports);
    if (answered) return answered;
    const leftover = await finishPendingCalls(ports);
    if (leftover) return leftover;
    reaskLeftAnswer(ports);
    for (let done = 0; done < maxIterations; done += 1) {
      if (ports.signal.aborted) return interrupted();
      // One read per iteration: the events that number it are the ones its context is built from.
      const journal = ports.journal.read();
      const end = await iterate(ports, journal.state.iterations + 1, journal);
      if (end) return end;
    }
    return {
      status: "FAILED",
      error: { type: MAX_ITERATIONS, message: `Reached --max-iterations (${maxIterations}) before the model finished; each continue of the run allows it as many more (--max-iterations N on continue sets how many)` },
    };
  } catch (err) {
    if (ports.signal.aborted) return interrupted();
    if (err instanceof DeferredError) return { status: "DEFERRED", deferred: err.deferral };
    if (err instanceof DeltaError) return { status: "FAILED", error: { type: err.type, message: err.message } };
    throw err;
  }
}

async function iterate(ports: LoopPorts, iteration: number, journal: ShownJournal): Promise<LoopEnd | null> {
  await ports.hook("on_iteration_start", iteration, { iteration });
  const thought = await think(ports, iteration, journal);
  if (ports.signal.aborted) return interrupted();
  // A reply the model did not finish is no instruction: none of its tool calls runs.
  if (thought.tool_calls.length === 0 || replyEnding(thought.finish_reason) !== "finished") {
    // The final iteration is an iteration too: it ends before the run does.
    await ports.hook("on_iteration_end", iteration, { iteration });
    return unfinishedReply(ports, thought) ?? finalAnswer(ports, thought, journal.events);
  }
  for (const [index, call] of thought.tool_calls.entries()) {
    const outcome = await act(ports, { call, iteration, key: actionKey(ports.settings.runId, iteration, thought.tool_calls, index) });
    if (outcome.kind === "waiting") return { status: "WAITING_FOR_INPUT", request: outcome.request };
    if (ports.signal.aborted) return interrupted();
  }
  await ports.hook("on_iteration_end", iteration, { iteration });
  return null;
}

/**
 * The engine stopped after the model's final answer was journaled and before the run ended on it: the run ends on that
 * answer as it would have — its on_iteration_end hook (unless its outcome was journaled), then its output schema —
 * with no model call. Null when there is no such answer, or when the schema's re-ask was appended (the model is then asked, as it would have been).
 */
async function finishOpenAnswer(ports: LoopPorts): Promise<LoopEnd | null> {
  const open = ports.journal.runState().openAnswer;
  if (open === null || replyEnding(open.thought.finish_reason) !== "finished") return null;
  const { thought } = open;
  ports.log.progress(`[${thought.iteration}] the model's final answer was journaled before the engine stopped; the run ends on it (no model request)`);
  if (!open.iterationEndRan) await ports.hook("on_iteration_end", thought.iteration, { iteration: thought.iteration });
  if (ports.signal.aborted) return interrupted();
  const before = ports.journal.read().events.filter((event) => event.seq < thought.seq);
  return finalAnswer(ports, thought, before);
}

/**
 * After a crash or a pause, the last THOUGHT may hold calls with no result. A call that was
 * requested may have run: a tool declared `effects: idempotent` runs again with the same
 * idempotency key (its ACTION_REQUEST names the one it repeats); any other gets a synthesized
 * ERROR result and is never re-run behind the model's back. Calls never requested had not started,
 * so they run now, in the model's order. An ask_human call whose answer was recorded gets that
 * answer as its result. The calls of a reply the model did not finish never run.
 */
async function finishPendingCalls(ports: LoopPorts): Promise<LoopEnd | null> {
  const state = ports.journal.runState();
  const thought = state.lastThought;
  if (thought === null || replyEnding(thought.finish_reason) !== "finished") return null;
  for (const pending of state.pending) {
    const planned = { call: pending.call, iteration: pending.iteration, key: actionKey(ports.settings.runId, pending.iteration, thought.tool_calls, pending.index) };
    if (pending.answer !== null) {
      // The human's answer was recorded but its result was not: the answer is the result.
      recordAnswerResult(ports.journal, { iteration: pending.iteration, action_id: pending.call.id }, pending.answer, 0);
      ports.human.clear();
      ports.log.progress(`[${pending.iteration}] ${pending.call.name}: recorded the answer given before the engine stopped`);
      continue;
    }
    if (pending.requestSeq !== null && rerunsSafely(ports.tools.find(pending.call.name))) {
      ports.log.progress(`[${pending.iteration}] ${pending.call.name}: no result was recorded before the engine stopped; it is idempotent, so it runs again with the same key (${planned.key.key})`);
      const outcome = await act(ports, { ...planned, rerunOf: pending.requestSeq });
      if (outcome.kind === "waiting") return { status: "WAITING_FOR_INPUT", request: outcome.request };
      if (ports.signal.aborted) return interrupted();
      continue;
    }
    if (pending.requestSeq !== null) {
      ports.journal.append({
        type: "ACTION_RESULT",
        iteration: pending.iteration,
        action_id: pending.call.id,
        tool_name: pending.call.name,
        status: "ERROR",
        observation_content: "The engine stopped before this action finished; it may or may not have taken effect.",
        exit_code: null,
        duration_ms: 0,
      });
      ports.log.progress(`[${pending.iteration}] ${pending.call.name}: no result was recorded before the engine stopped; told the model it may or may not have taken effect (a tool declared effects: idempotent runs again instead)`);
      continue;
    }
    const outcome = await act(ports, planned);
    if (outcome.kind === "waiting") return { status: "WAITING_FOR_INPUT", request: outcome.request };
    if (ports.signal.aborted) return interrupted();
  }
  return null;
}

/**
 * A final answer ends the run COMPLETED, unless an output schema holds it and it does not match:
 * then the engine re-asks once (a USER_MESSAGE of its own), and an answer to that re-ask that
 * still does not match ends the run FAILED with OUTPUT_INVALID. `events`: the journal before the answer.
 */
function finalAnswer(ports: LoopPorts, thought: EventOf<"THOUGHT">, events: readonly JournalEvent[]): LoopEnd | null {
  const output = ports.settings.output;
  if (output === undefined) return { status: "COMPLETED", result: thought.content };
  const check = checkFinalAnswer(thought.content, output);
  if (check.valid) return { status: "COMPLETED", result: thought.content, parsed: { value: check.value } };
  if (answersReask(events)) {
    return {
      status: "FAILED",
      error: {
        type: OUTPUT_INVALID,
        message:
          `The model's final answer still does not match the output schema (${output.schema.source}) after the engine asked again: ${check.problems.join("; ")}. ` +
          "Continue the run to ask once more (or add -m to tell the model more).",
      },
    };
  }
  ports.journal.append({ type: "USER_MESSAGE", source: "engine", content: reaskMessage(check.problems, output) });
  ports.log.progress(`[${thought.iteration}] the final answer does not match the output schema (${check.problems[0]}); asking the model once more`);
  return null;
}

/** After a run ended on an unmatched answer (OUTPUT_INVALID, or a stop before the re-ask), `continue` without -m re-asks before the next model call. */
function reaskLeftAnswer(ports: LoopPorts): void {
  const output = ports.settings.output;
  if (output === undefined) return;
  const answer = unansweredFinalAnswer(ports.journal.read().events);
  if (answer === null || replyEnding(answer.finish_reason) !== "finished") return;
  const check = checkFinalAnswer(answer.content, output);
  if (check.valid) return;
  ports.journal.append({ type: "USER_MESSAGE", source: "engine", content: reaskMessage(check.problems, output) });
  ports.log.progress(`[${answer.iteration}] the last answer does not match the output schema (${check.problems[0]}); asking the model once more`);
}

/** A reply the model did not finish (cut off, refused, or paused by the server) ends the run FAILED, none of its tool calls run; `continue` asks again (the context leaves the reply out). */
function unfinishedReply(ports: LoopPorts, thought: EventOf<"THOUGHT">): LoopEnd | null {
  const ending = replyEnding(thought.finish_reason);
  if (ending === "finished") return null;
  const limit = ports.settings.llm.max_tokens;
  const resume = "continue the run to ask the model again";
  const calls = thought.tool_calls.length;
  // Its tool calls' arguments may be cut short too: the model did not finish asking for them.
  const notRun = calls === 0 ? "" : `, and none of its ${calls === 1 ? "tool call" : `${calls} tool calls`} ran`;
  if (ending === "truncated") {
    const raise = limit === undefined ? "set llm.max_tokens in agent.yaml higher than the server's default" : `raise llm.max_tokens in agent.yaml (now ${limit})`;
    return {
      status: "FAILED",
      error: { type: MODEL_TRUNCATED, message: `The model's reply was cut off at its token limit (finish_reason: ${thought.finish_reason}), so it is not a result${notRun}; ${raise}, then ${resume}.` },
    };
  }
  if (ending === "paused") {
    return {
      status: "FAILED",
      error: { type: MODEL_PAUSED, message: `The model's server paused its turn half-way (finish_reason: ${thought.finish_reason}, which its own server tools cause), so the reply is not a result${notRun}; ${resume}.` },
    };
  }
  return {
    status: "FAILED",
    error: { type: MODEL_REFUSED, message: `The provider stopped the model's reply (finish_reason: ${thought.finish_reason}): a content filter or the model refused${notRun}; rephrase the task with ${ports.settings.continueCommand("<rephrased task>")}, or ${resume}.` },
  };
}

function interrupted(): LoopEnd {
  return { status: "INTERRUPTED", error: { type: "INTERRUPTED", message: "The run was interrupted by a signal." } };
}
