// Two runs compared: the first model call whose requests differ (llm/request-equality.ts, part by part), and each iteration's tool calls side by side.
import type { ActionStatus } from "../journal/events.js";
import { streamJournal } from "../journal/reader.js";
import { compareRequests, normalizeText, type PartDifference, type RunFacts } from "../llm/request-equality.js";
import { openRecordedCalls, recordedRunFacts } from "../store/recorded-requests.js";
import type { RunPaths } from "../store/run-dir.js";

/** One run of the two, as the command line found it. */
interface DiffedRun {
  runId: string;
  paths: RunPaths;
}

/** What `delta diff --format json` prints. */
export interface RunDiff {
  /** Every model request of one run equals the other's, call for call, and both made as many calls. */
  equal: boolean;
  a: DiffSide;
  b: DiffSide;
  first_difference: FirstDifference | null;
  iterations: IterationRow[];
}

interface DiffSide {
  run_id: string;
  run_dir: string;
  model_calls: number;
}

interface FirstDifference {
  /** The model call, from 1, in call order. */
  call: number;
  /** The iteration that call had in each run; null in the run that made no such call. */
  iteration: { a: number | null; b: number | null };
  /** The parts that differ; none when one run made no such call. */
  parts: PartDifference[];
  /** Which run made no such call, when one did not. */
  missing_in: "a" | "b" | null;
}

/** One iteration: what each run's model answered in it, or null for a run that has no such iteration. */
interface IterationRow {
  iteration: number;
  a: IterationCalls | null;
  b: IterationCalls | null;
  /** The same tool calls (name, arguments as normalized, outcome) and the same answer in both runs. */
  same: boolean;
}

interface IterationCalls {
  calls: CallFacts[];
  /** The reply's text, when it called no tool (its first ANSWER_CHARS characters). */
  answer: string | null;
}

interface CallFacts {
  name: string;
  /** The arguments as the model wrote them, their first ARGUMENT_CHARS characters. */
  arguments: string;
  /** The call's result; null when none was journaled. */
  status: ActionStatus | null;
}

/** Enough to tell calls apart at a glance; the whole text is in each run's journal. */
const ARGUMENT_CHARS = 400;
const ANSWER_CHARS = 400;

export function diffRuns(a: DiffedRun, b: DiffedRun): RunDiff {
  const factsA = recordedRunFacts(a.paths);
  const factsB = recordedRunFacts(b.paths);
  const callsA = openRecordedCalls(a.paths);
  const callsB = openRecordedCalls(b.paths);
  let first: FirstDifference | null = null;
  // Call by call, each request rebuilt when its turn comes: the runs' requests are never all held.
  for (let index = 0; index < Math.max(callsA.count, callsB.count) && first === null; index += 1) {
    const iteration = { a: index < callsA.count ? callsA.iteration(index) : null, b: index < callsB.count ? callsB.iteration(index) : null };
    if (iteration.a === null || iteration.b === null) {
      first = { call: index + 1, iteration, parts: [], missing_in: iteration.a === null ? "a" : "b" };
      break;
    }
    const parts = compareRequests({ request: callsA.request(index), facts: factsA }, { request: callsB.request(index), facts: factsB });
    if (parts.length > 0) first = { call: index + 1, iteration, parts, missing_in: null };
  }
  return {
    equal: first === null,
    a: { run_id: a.runId, run_dir: a.paths.runDir, model_calls: callsA.count },
    b: { run_id: b.runId, run_dir: b.paths.runDir, model_calls: callsB.count },
    first_difference: first,
    iterations: sideBySide(iterationCalls(a.paths), iterationCalls(b.paths), factsA, factsB),
  };
}

/** Each iteration's tool calls and their outcomes, streamed from the journal; an iteration asked twice keeps its last reply. */
function iterationCalls(paths: Pick<RunPaths, "journal">): Map<number, IterationCalls> {
  const iterations = new Map<number, IterationCalls>();
  const statusOf = new Map<string, { iteration: number; index: number }>();
  streamJournal(paths.journal, (event) => {
    if (event.type === "THOUGHT") {
      const calls = event.tool_calls.map((call) => ({ name: call.name, arguments: clipped(call.arguments, ARGUMENT_CHARS), status: null }));
      iterations.set(event.iteration, { calls, answer: calls.length === 0 && event.content !== null ? clipped(event.content, ANSWER_CHARS) : null });
      statusOf.clear();
      event.tool_calls.forEach((call, index) => statusOf.set(call.id, { iteration: event.iteration, index }));
    }
    if (event.type === "ACTION_RESULT") {
      const at = statusOf.get(event.action_id);
      const call = at === undefined ? undefined : iterations.get(at.iteration)?.calls[at.index];
      if (call !== undefined) call.status = event.status;
    }
  });
  return iterations;
}

function sideBySide(a: Map<number, IterationCalls>, b: Map<number, IterationCalls>, factsA: RunFacts, factsB: RunFacts): IterationRow[] {
  const numbers = [...new Set([...a.keys(), ...b.keys()])].sort((x, y) => x - y);
  return numbers.map((iteration) => {
    const left = a.get(iteration) ?? null;
    const right = b.get(iteration) ?? null;
    const same = left !== null && right !== null && sameCalls(left, right, factsA, factsB);
    return { iteration, a: left, b: right, same };
  });
}

function sameCalls(a: IterationCalls, b: IterationCalls, factsA: RunFacts, factsB: RunFacts): boolean {
  if (a.calls.length !== b.calls.length) return false;
  const both = [factsA, factsB];
  if ((a.answer === null ? null : normalizeText(a.answer, both)) !== (b.answer === null ? null : normalizeText(b.answer, both))) return false;
  return a.calls.every((call, index) => {
    const other = b.calls[index]!;
    return call.name === other.name && call.status === other.status && normalizeText(call.arguments, both) === normalizeText(other.arguments, both);
  });
}

function clipped(text: string, chars: number): string {
  return text.length > chars ? `${text.slice(0, chars)}…` : text;
}
