// The five tools of `delta mcp serve` — run, continue, answer, status, result — their argument schemas and what each does with the server's child runs.
import { z } from "zod";
import { errorMessage } from "../errors.js";
import { listRuns } from "../store/list-runs.js";
import { generateRunId, parseRunId, type RunId } from "../store/run-id.js";
import { findRunDir } from "../store/run-dir.js";
import { journaledOutcome } from "../run/idempotent-run.js";
import { toRunResult, type RunResult } from "../run/run-result.js";
import type { ChildRun, ChildRuns } from "./child-runs.js";
import type { Elicited, Question } from "./elicit-answer.js";

const DEFAULT_WAIT_MS = 30_000;
const MAX_WAIT_MS = 600_000;

const waitMs = z.number().int().min(0).max(MAX_WAIT_MS).optional().describe(`How long to wait for the run to end, in ms (default ${DEFAULT_WAIT_MS}); past it the answer is {run_id, status: "RUNNING"}`);
const runId = z.string().describe("The run's id (1-128 of A-Z a-z 0-9 . _ -)");

const TOOL_SCHEMAS = {
  run: z.strictObject({
    task: z.string().min(1).describe("The task for the agent"),
    run_id: runId.optional().describe("An id of your choosing for the new run (default: one is made)"),
    wait_ms: waitMs,
  }),
  continue: z.strictObject({
    run_id: runId,
    message: z.string().min(1).optional().describe("A new instruction (none: resume an interrupted or failed run as it stands)"),
    wait_ms: waitMs,
  }),
  answer: z.strictObject({
    run_id: runId,
    answer: z.string().describe("The answer to the run's open ask_human question"),
    wait_ms: waitMs,
  }),
  status: z.strictObject({ run_id: runId }),
  result: z.strictObject({ run_id: runId }),
};
type ToolName = keyof typeof TOOL_SCHEMAS;

const DESCRIPTIONS: Record<ToolName, string> = {
  run: "Start a run of the agent on a task. Returns its RunResult if it ends within wait_ms, else {run_id, status: \"RUNNING\"}: ask status or result later. A question the run asks is put to your user by elicitation when you support it.",
  continue: "Continue a run: resume it after an interruption or failure, or give a finished run a new instruction.",
  answer: "Answer the question of a run that is WAITING_FOR_INPUT (its agent called ask_human); the run then goes on.",
  status: "The status of a run (RUNNING, COMPLETED, FAILED, WAITING_FOR_INPUT, INTERRUPTED, DEFERRED) and its iterations so far; a DEFERRED run says what it waits for and from when (resume_after) continue goes on.",
  result: "The RunResult of a run that has ended (rebuilt from its journal for a run this server did not start), or {run_id, status: \"RUNNING\"} while it runs.",
};

/** The tools as tools/list shows them, input schemas as JSON Schema. */
export function toolList(): { name: string; description: string; inputSchema: Record<string, unknown> }[] {
  return (Object.keys(TOOL_SCHEMAS) as ToolName[]).map((name) => ({
    name,
    description: DESCRIPTIONS[name],
    inputSchema: z.toJSONSchema(TOOL_SCHEMAS[name]) as Record<string, unknown>,
  }));
}

interface CallContext {
  runs: ChildRuns;
  workDir: string;
  /** The client calling: its runs are interrupted when it disconnects. */
  owner: string;
  /** Aborted when the client cancels the call: waiting stops, the run goes on. */
  signal: AbortSignal;
  /** Reports the iteration; present only when the client sent a progress token. */
  progress?: (iteration: number) => void;
  /** Puts a question to the client's user; present only when the client declared form elicitation. */
  ask?: (question: Question) => Promise<Elicited>;
}

/** A refusal the caller can fix: reported as a tool error naming the field. */
export class ToolArgumentError extends Error {}

/** Runs one tool call; throws ToolArgumentError (or a DeltaError) for arguments it refuses. */
export async function callTool(name: string, rawArgs: unknown, context: CallContext): Promise<Record<string, unknown>> {
  if (!(name in TOOL_SCHEMAS)) throw new ToolArgumentError(`unknown tool '${name}'; the tools are: ${Object.keys(TOOL_SCHEMAS).join(", ")}`);
  const tool = name as ToolName;
  const parsed = TOOL_SCHEMAS[tool].safeParse(rawArgs ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ToolArgumentError(`${tool}: argument ${issue.path.join(".") || "(arguments)"}: ${issue.message}`);
  }
  const args = parsed.data as Record<string, unknown>;
  // Every tool but run requires it; run makes one when none is given.
  const id = args.run_id === undefined ? generateRunId() : runIdArgument(args.run_id as string);
  const wait = (args.wait_ms as number | undefined) ?? DEFAULT_WAIT_MS;
  switch (tool) {
    case "run":
      return followRun(context.runs.start({ kind: "run", runId: id, message: args.task as string, owner: context.owner }), wait, context);
    case "continue":
      requireRun(id, context);
      return followRun(context.runs.start({ kind: "continue", runId: id, message: args.message as string | undefined, owner: context.owner }), wait, context);
    case "answer": {
      const status = currentStatus(id, context).status;
      if (status !== "WAITING_FOR_INPUT") throw new ToolArgumentError(`run_id: run ${id} is ${status}, not WAITING_FOR_INPUT: there is no question to answer`);
      return followRun(context.runs.start({ kind: "continue", runId: id, message: args.answer as string, owner: context.owner }), wait, context);
    }
    case "status":
      return currentStatus(id, context);
    case "result": {
      const child = context.runs.get(id);
      if (child?.result) return child.result;
      if (child === undefined) {
        // A run this server did not start (or started before a restart): its RunResult as its journal records it.
        requireRun(id, context);
        const outcome = journaledOutcome({ runId: id, workDir: context.workDir }, () => {});
        if (outcome !== null) return toRunResult(outcome);
      }
      return currentStatus(id, context);
    }
    default: {
      const unknown: never = tool;
      throw new ToolArgumentError(`unknown tool '${String(unknown)}'`);
    }
  }
}

/** The run id a client gave, checked once, here: a refusal names the field. */
function runIdArgument(id: string): RunId {
  try {
    return parseRunId(id);
  } catch (err) {
    throw new ToolArgumentError(`run_id: ${errorMessage(err)}`);
  }
}

function requireRun(id: RunId, context: CallContext): void {
  try {
    findRunDir(context.workDir, id);
  } catch {
    throw new ToolArgumentError(`run_id: no run ${id} in the workspace ${context.workDir}; the status tool, or \`delta list-runs -w ${context.workDir}\`, lists what is there`);
  }
}

/** What the run's files say now (the running child's count of iterations while it runs). */
function currentStatus(id: RunId, context: CallContext): Record<string, unknown> {
  const child = context.runs.get(id);
  if (child !== undefined && child.result === null) return { run_id: id, status: "RUNNING", iterations: child.iterations };
  requireRun(id, context);
  const summary = listRuns(context.workDir, {}, () => {}).find((run) => run.run_id === id);
  if (summary === undefined) throw new ToolArgumentError(`run_id: run ${id} in ${context.workDir} cannot be read; see \`delta show ${id} -w ${context.workDir}\``);
  return { run_id: id, status: summary.status, iterations: summary.iterations, task_summary: summary.task_summary, last_updated: summary.last_updated, ...(summary.deferred ? { deferred: summary.deferred } : {}) };
}

/**
 * Waits for the run; when it stops at a question and the client can elicit, the question goes to the client's user
 * and the run is continued with the answer (each leg waiting up to `waitMs` again). A question not answered leaves
 * the run WAITING_FOR_INPUT, and the answer says why in `elicitation`.
 */
async function followRun(first: ChildRun, waitMs: number, context: CallContext): Promise<RunResult | Running | (RunResult & { elicitation: Elicited })> {
  let run = first;
  // Model calls of the earlier legs: progress keeps rising across them.
  let before = 0;
  for (;;) {
    const ended = await waitForRun(run, waitMs, context, before);
    if (ended.status !== "WAITING_FOR_INPUT" || context.ask === undefined || ended.interaction === undefined) return ended;
    const reply = await context.ask(ended.interaction);
    if (reply.action !== "accept") return { ...ended, elicitation: reply };
    before += run.iterations;
    run = context.runs.start({ kind: "continue", runId: run.runId, message: reply.answer, owner: context.owner });
  }
}

/** What a run tool answers while the run goes on: ask status or result later. */
type Running = { run_id: string; status: "RUNNING"; iterations: number };

/** The RunResult if the run ends within `waitMs` (or the call is cancelled first: then RUNNING); progress while waiting. */
async function waitForRun(run: ChildRun, waitMs: number, context: CallContext, before: number): Promise<RunResult | Running> {
  const report = context.progress;
  const stopProgress = report ? run.onIteration((iteration) => report(before + iteration)) : () => {};
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const ended = await Promise.race([
      run.done,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), waitMs);
        onAbort = () => resolve(null);
        context.signal.addEventListener("abort", onAbort, { once: true });
      }),
    ]);
    return ended ?? { run_id: run.runId, status: "RUNNING", iterations: run.iterations };
  } finally {
    clearTimeout(timer);
    if (onAbort) context.signal.removeEventListener("abort", onAbort);
    stopProgress();
  }
}
