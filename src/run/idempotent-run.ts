// `delta run --run-id X --if-exists resume`: a retried task meets its own run and gets its outcome, or goes on with it, instead of a refusal; and any ended run's RunResult rebuilt from its journal.
import { journalTraceOf } from "../trace/trace-ids.js";
import { existsSync, realpathSync } from "node:fs";
import { RunRefusedError } from "../errors.js";
import type { EventOf } from "../journal/events.js";
import { createFoldTracker } from "../journal/fold.js";
import { landmarksFold, type Landmarks } from "../journal/landmarks.js";
import { foldJournal } from "../journal/reader.js";
import { trackRunState, type RunState } from "../journal/run-state.js";
import { priceRunUsage } from "../llm/usage.js";
import { runPaths, type RunPaths } from "../store/run-dir.js";
import type { RunId } from "../store/run-id.js";
import { openRunFiles, type RunFiles } from "../store/run-files.js";
import { continueCommand } from "../continue-command.js";
import { parseResult, type RunOutcome } from "./outcome.js";
import type { DriveOptions } from "./drive-options.js";
import { continueRun } from "./resume.js";

/** What `--if-exists` does when the run id is taken: refuse (126, as always) or resume the same task. */
export type IfExists = "refuse" | "resume";

interface ExistingRunRequest extends DriveOptions {
  runId: RunId;
  workDir: string;
  agentHome: string;
  message: string;
}

/** True when `workDir` already holds a run directory named `runId`. */
export function runExists(workDir: string, runId: RunId): boolean {
  return existsSync(runPaths(workDir, runId).runDir);
}

/**
 * The run's state decides: COMPLETED gives back its RunResult from the journal (no model call), FAILED, DEFERRED,
 * INTERRUPTED and a RUNNING run whose holder is gone are continued (a live holder refuses, as `continue`
 * does), WAITING_FOR_INPUT asks its question again. A run of another task is refused.
 */
export async function resumeExistingRun(request: ExistingRunRequest): Promise<RunOutcome> {
  const paths = runPaths(request.workDir, request.runId);
  // This process's one reader of the run: a run that goes on is continued with it, its journal not parsed again.
  const files = openRunFilesOf(paths, request);
  const marks = files.landmarks();
  const start = marks.first;
  if (start?.type !== "ENGINE_START") {
    throw new RunRefusedError(`Run ${request.runId} in ${request.workDir} has no ENGINE_START yet: another process is starting it. Retry once it has started, or choose another --run-id.`);
  }
  const state = files.state();
  refuseAnotherTask(request, start.agent_home, state.initialMessage);
  switch (state.status) {
    case "COMPLETED":
      request.progress(`Run ${request.runId} already COMPLETED; its result is given again from the journal (no model request).`);
      return finishedOutcome(request, paths, marks, state);
    case "WAITING_FOR_INPUT":
      request.progress(`Run ${request.runId} is WAITING_FOR_INPUT: ${state.waiting!.prompt}\nAnswer with: ${continueCommand(request.runId, request.workDir, "<answer>")}`);
      return waitingOutcome(request, paths, marks, state);
    case "FAILED":
    case "INTERRUPTED":
    case "DEFERRED":
    case "RUNNING": {
      // The same task goes on, as `continue` without -m: the task is in the journal already, and saying it twice would change the conversation.
      const { message: _sameTask, ...goOn } = request;
      return continueRun({ ...goOn, force: false }, files);
    }
  }
}

/** Which run, in which workspace. */
type RunRef = Pick<ExistingRunRequest, "runId" | "workDir">;

/**
 * The RunResult a run gave when its last process ended, rebuilt from the journal with no model call: COMPLETED,
 * WAITING_FOR_INPUT, FAILED or INTERRUPTED with their journaled error, DEFERRED with what it waits for. Null while the journal has no end
 * (a process still runs it, or one died holding it) or no journal at all.
 */
export function journaledOutcome(run: RunRef, warn: (message: string) => void): RunOutcome | null {
  const paths = runPaths(run.workDir, run.runId);
  if (!existsSync(paths.journal)) return null;
  // Streamed through the run state and the landmarks: the outcome needs no event kept.
  const tracker = createFoldTracker();
  const runState = trackRunState(tracker);
  const landmarks = tracker.register(landmarksFold);
  foldJournal(paths.journal, tracker, { warn });
  const marks = landmarks();
  if (marks.first?.type !== "ENGINE_START") return null;
  const state = runState();
  switch (state.status) {
    case "COMPLETED":
      return finishedOutcome(run, paths, marks, state);
    case "WAITING_FOR_INPUT":
      return waitingOutcome(run, paths, marks, state);
    case "FAILED":
    case "INTERRUPTED":
    case "DEFERRED":
      return endedOutcome(run, paths, marks, state);
    case "RUNNING":
      return null;
  }
}

function openRunFilesOf(paths: RunPaths, request: ExistingRunRequest): RunFiles {
  if (!existsSync(paths.journal)) {
    throw new RunRefusedError(`Run ${request.runId} in ${request.workDir} has no journal yet: another process is starting it. Retry once it has started, or choose another --run-id.`);
  }
  return openRunFiles(paths, { warn: request.warn });
}

function refuseAnotherTask(request: ExistingRunRequest, agentHome: string, firstMessage: string | null): void {
  let home = request.agentHome;
  try {
    home = realpathSync(home);
  } catch {
    // The agent was loaded from this path a moment ago; compare it as given.
  }
  if (home !== agentHome) {
    throw new RunRefusedError(`Run ${request.runId} in ${request.workDir} belongs to the agent ${agentHome}, not ${home}: --if-exists resume only resumes the same task. Choose another --run-id.`);
  }
  if (firstMessage !== request.message) {
    throw new RunRefusedError(`Run ${request.runId} in ${request.workDir} was started with another task (its first message differs from -m): --if-exists resume only resumes the same task. Choose another --run-id.`);
  }
}

/** The RunResult the run gave when it completed, rebuilt from the journal: its last process's times, each call priced as its process journaled. */
function finishedOutcome(request: RunRef, paths: RunPaths, marks: Landmarks, state: RunState): RunOutcome {
  const { start, end } = lastProcess(marks);
  return {
    ...common(request, paths, marks, state),
    status: "COMPLETED",
    result: parseResult(state.lastThought?.content ?? null),
    resultText: state.lastThought?.content ?? null,
    startTime: new Date(start.timestamp),
    endTime: new Date(end?.timestamp ?? start.timestamp),
    // Each call is priced in the fold with the llm.pricing its own process journaled.
    usage: priceRunUsage(state.usage, undefined),
  };
}

/** The open question again (exit 101). */
function waitingOutcome(request: RunRef, paths: RunPaths, marks: Landmarks, state: RunState): RunOutcome {
  const { start, end } = lastProcess(marks);
  const question = state.waiting!;
  return {
    ...common(request, paths, marks, state),
    status: "WAITING_FOR_INPUT",
    interaction: { prompt: question.prompt, input_type: question.input_type, sensitive: question.sensitive, request_id: question.request_id },
    startTime: new Date(start.timestamp),
    endTime: new Date(end?.timestamp ?? start.timestamp),
    // Each call is priced in the fold with the llm.pricing its own process journaled.
    usage: priceRunUsage(state.usage, undefined),
  };
}

/** A FAILED or INTERRUPTED end with the error its process journaled just before ENGINE_END; a DEFERRED one with what it waits for. */
function endedOutcome(request: RunRef, paths: RunPaths, marks: Landmarks, state: RunState): RunOutcome {
  const { start, end } = lastProcess(marks);
  const error = state.lastError;
  return {
    ...common(request, paths, marks, state),
    status: state.status,
    ...(state.status === "DEFERRED" ? (state.deferred ? { deferred: state.deferred } : {}) : error ? { error: { type: error.error_type, message: error.error_message } } : {}),
    startTime: new Date(start.timestamp),
    endTime: new Date(end?.timestamp ?? start.timestamp),
    usage: priceRunUsage(state.usage, undefined),
  };
}

function common(request: RunRef, paths: RunPaths, marks: Landmarks, state: RunState): Pick<RunOutcome, "runId" | "iterations" | "agentName" | "workspacePath" | "runDir" | "traceId"> {
  const first = marks.first;
  const agentName = (first?.type === "ENGINE_START" ? first.config.agent_name : undefined) ?? null;
  return { runId: request.runId, iterations: state.iterations, agentName, workspacePath: request.workDir, runDir: paths.runDir, traceId: journalTraceOf(first)?.traceId ?? null };
}

/** The last ENGINE_START and the ENGINE_END after it, if any. */
function lastProcess(marks: Landmarks): { start: EventOf<"ENGINE_START">; end: EventOf<"ENGINE_END"> | null } {
  return { start: marks.starts.at(-1)!, end: marks.lastProcessEnded ? marks.lastEnd : null };
}
