// One run read from its files for a person, folded as the journal streams past: status, usage, iterations (their timing, not their text), and who holds it.
import type { Deferred, EventOf, JournalEvent, RunStatus } from "../journal/events.js";
import type { JournaledPrices } from "../journal/usage-totals.js";
import { foldJournal } from "../journal/reader.js";
import { createFoldTracker, type EventFold, type FoldTracker } from "../journal/fold.js";
import { landmarksFold } from "../journal/landmarks.js";
import { trackRunState } from "../journal/run-state.js";
import { errorMessage } from "../errors.js";
import { assessOwner, type HolderAssessment } from "../store/lease/judge.js";
import { readCurrentOwner } from "../store/lease/take-run.js";
import { runIdsIn } from "../store/list-runs.js";
import { runPaths, type RunPaths } from "../store/run-dir.js";
import { readMetadata, type RunMetadata } from "../store/run-metadata.js";
import { journalTraceOf, type RunTrace } from "../trace/trace-ids.js";
import { shownUsage } from "./priced-usage.js";
import { runUsageShown, type UsageTotals } from "./usage-fields.js";

/** What the timeline needs of a THOUGHT: its timing, not its text. */
type ThoughtFacts = Pick<EventOf<"THOUGHT">, "seq" | "iteration" | "timestamp" | "started_at" | "duration_ms" | "attempts"> & {
  /** The event before it: where the call began, for a journal whose THOUGHTs carry no timing of their own. */
  previousTimestamp: string | null;
};

interface ActionAccount {
  request: Pick<EventOf<"ACTION_REQUEST">, "seq" | "timestamp" | "tool_name">;
  /** null while the tool runs, or when the engine died before recording it. */
  result: Pick<EventOf<"ACTION_RESULT">, "seq" | "timestamp" | "duration_ms" | "status"> | null;
}

interface IterationAccount {
  iteration: number;
  thought: ThoughtFacts;
  usage: UsageTotals;
  actions: ActionAccount[];
}

/**
 * A run's account keeps no event's text but its error, its open question and its failed attempts (each bounded):
 * `show` and `report` stream the events themselves a second time, as they print them.
 */
export interface RunAccount {
  runId: string;
  paths: RunPaths;
  workDir: string;
  /** Events the account was folded from: a second pass over a journal still growing stops there. */
  eventCount: number;
  status: RunStatus;
  /** For a RUNNING run: whether its engine process still lives (judged from the run's owner record). */
  holder: HolderAssessment | null;
  metadata: RunMetadata | null;
  task: string | null;
  agentName: string | null;
  trace: RunTrace | null;
  iterationCount: number;
  toolCalls: number;
  failedAttemptCount: number;
  /** The last KEPT_ITERATIONS iterations (what the report charts), and the failed attempts among them. */
  iterations: IterationAccount[];
  failedAttempts: EventOf<"LLM_ATTEMPT_FAILED">[];
  /** The journal's last ERROR: why a FAILED or INTERRUPTED run stopped. */
  lastError: EventOf<"ERROR"> | null;
  /** The open ask_human question of a run WAITING_FOR_INPUT. */
  waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null;
  /** What a DEFERRED run waits for. */
  deferred: Deferred | null;
  usage: UsageTotals;
  /** Of the usage, the calls answered through a provider's batch API (priced at the batch rate); null when none was. */
  batchUsage: UsageTotals | null;
  /** First and last event's timestamps, as journaled and as epoch ms. */
  firstTimestamp: string | null;
  lastTimestamp: string | null;
  startedAt: number | null;
  endedAt: number | null;
}

type AccountFacts = Pick<RunAccount, "workDir" | "runId" | "paths" | "metadata">;

/** Reads a run, streaming its journal once; a damaged metadata.json is only a warning, since the journal is the authority. */
export function loadRunAccount(workDir: string, runId: string, paths: RunPaths, warn: (line: string) => void): RunAccount {
  const tracker = createFoldTracker();
  const account = trackRunAccount(tracker);
  foldJournal(paths.journal, tracker, { warn });
  let metadata: RunMetadata | null = null;
  try {
    metadata = readMetadata(paths);
  } catch (err) {
    warn(`run ${runId}: ${errorMessage(err)}`);
  }
  return account({ workDir, runId, paths, metadata });
}

/** The account of events already in hand. */
export function accountOf(workDir: string, runId: string, paths: RunPaths, events: readonly JournalEvent[], metadata: RunMetadata | null): RunAccount {
  const tracker = createFoldTracker();
  const account = trackRunAccount(tracker);
  for (const event of events) tracker.see(event);
  return account({ workDir, runId, paths, metadata });
}

/** Registers an account's folds on `tracker` (one pass: run state, landmarks, iterations); returns the account after the events it has seen. */
export function trackRunAccount(tracker: FoldTracker): (facts: AccountFacts) => RunAccount {
  const runState = trackRunState(tracker);
  const marks = tracker.register(landmarksFold);
  const grouped = tracker.register(iterationsFold);
  return (facts) => {
    const state = runState();
    const { first, last, count } = marks();
    const { iterations, failedAttempts, iterationCount, toolCalls, failedAttemptCount, usageKeys } = grouped();
    const kept = iterations.slice(-KEPT_ITERATIONS);
    const from = kept[0]?.iteration ?? 0;
    return {
      ...facts,
      eventCount: count,
      status: state.status,
      holder: state.status === "RUNNING" ? assessOwner(readCurrentOwner(facts.paths)) : null,
      task: state.initialMessage,
      agentName: facts.metadata?.agent_name ?? agentNameOf(first),
      trace: journalTraceOf(first),
      iterationCount,
      toolCalls,
      failedAttemptCount,
      iterations: kept,
      failedAttempts: failedAttempts.filter((attempt) => attempt.iteration >= from),
      lastError: state.lastError,
      waiting: state.waiting,
      deferred: state.deferred,
      usage: runUsageShown(state.usage.total, usageKeys),
      batchUsage: state.usage.batch.calls === 0 ? null : runUsageShown(state.usage.batch, usageKeys),
      firstTimestamp: first?.timestamp ?? null,
      lastTimestamp: last?.timestamp ?? null,
      startedAt: timeOf(first),
      endedAt: timeOf(last),
    };
  };
}

/** Iterations whose timing an account keeps: a longer run keeps its last ones, so an account is bounded whatever the journal's size. */
const KEPT_ITERATIONS = 1_000;

interface Grouped {
  /** The last iterations: between KEPT_ITERATIONS and twice that many, trimmed now and then. */
  iterations: IterationAccount[];
  failedAttempts: EventOf<"LLM_ATTEMPT_FAILED">[];
  iterationCount: number;
  toolCalls: number;
  failedAttemptCount: number;
  /** The usage fields any call carried. */
  usageKeys: Set<string>;
  /** Each process prices its own calls with the pricing its ENGINE_START recorded. */
  prices: JournaledPrices;
  /** The actions of the last THOUGHT, by id: a result answers one of them. */
  byAction: Map<string, ActionAccount>;
  previousTimestamp: string | null;
}

/** The events grouped by iteration: each THOUGHT's timing with its usage as priced and the actions it asked for. */
const iterationsFold: EventFold<Grouped> = {
  initial: () => ({ iterations: [], failedAttempts: [], iterationCount: 0, toolCalls: 0, failedAttemptCount: 0, usageKeys: new Set(), prices: {}, byAction: new Map(), previousTimestamp: null }),
  step(grouped, event) {
    const previousTimestamp = grouped.previousTimestamp;
    grouped.previousTimestamp = event.timestamp;
    switch (event.type) {
      case "ENGINE_START":
        grouped.prices = event.config;
        return grouped;
      case "THOUGHT": {
        const { seq, iteration, timestamp, started_at, duration_ms, attempts } = event;
        const thought: ThoughtFacts = { seq, iteration, timestamp, started_at, duration_ms, attempts, previousTimestamp };
        const usage = shownUsage(event, grouped.prices);
        for (const key of Object.keys(usage)) grouped.usageKeys.add(key);
        grouped.iterations.push({ iteration, thought, usage, actions: [] });
        grouped.iterationCount += 1;
        grouped.byAction.clear();
        if (grouped.iterations.length >= 2 * KEPT_ITERATIONS) trimToKept(grouped);
        return grouped;
      }
      case "ACTION_REQUEST": {
        const action: ActionAccount = { request: { seq: event.seq, timestamp: event.timestamp, tool_name: event.tool_name }, result: null };
        grouped.byAction.set(event.action_id, action);
        grouped.toolCalls += 1;
        grouped.iterations.at(-1)?.actions.push(action);
        return grouped;
      }
      case "ACTION_RESULT": {
        const action = grouped.byAction.get(event.action_id);
        if (action) action.result = { seq: event.seq, timestamp: event.timestamp, duration_ms: event.duration_ms, status: event.status };
        return grouped;
      }
      case "LLM_ATTEMPT_FAILED":
        grouped.failedAttempts.push(event);
        grouped.failedAttemptCount += 1;
        return grouped;
      case "USER_MESSAGE":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "REPLAY_DIVERGED":
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
      case "ENGINE_END":
        return grouped;
      default: {
        const unknown: never = event;
        throw new Error(`run account: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

function trimToKept(grouped: Grouped): void {
  grouped.iterations = grouped.iterations.slice(-KEPT_ITERATIONS);
  const from = grouped.iterations[0]!.iteration;
  grouped.failedAttempts = grouped.failedAttempts.filter((attempt) => attempt.iteration >= from);
}

function agentNameOf(first: JournalEvent | null): string | null {
  return (first?.type === "ENGINE_START" ? first.config.agent_name : undefined) ?? null;
}

/** Epoch ms of an event's timestamp, or null when it is not a date. */
export function timeOf(event: { timestamp: string } | null | undefined): number | null {
  if (!event) return null;
  const ms = Date.parse(event.timestamp);
  return Number.isNaN(ms) ? null : ms;
}

/** Every readable run of some workspaces, a row each: each account is cut down to its row before the next run is read. A run that cannot be read is reported through warn and left out. */
export function loadWorkspaceRows(workDirs: readonly string[], warn: (line: string) => void): RunRow[] {
  return workDirs.flatMap((workDir) =>
    runIdsIn(workDir).flatMap((runId) => {
      try {
        return [runRowOf(loadRunAccount(workDir, runId, runPaths(workDir, runId), warn))];
      } catch (err) {
        warn(`run ${runId} in ${workDir}: skipped: ${errorMessage(err)}`);
        return [];
      }
    }),
  );
}

/** What the workspace page shows of a run: a row's facts, none of its iterations, so the page's input grows by a row per run. */
export type RunRow = Pick<RunAccount, "runId" | "workDir" | "paths" | "status" | "holder" | "iterationCount" | "usage" | "task" | "lastError" | "deferred" | "firstTimestamp" | "lastTimestamp" | "startedAt" | "endedAt">;

function runRowOf(account: RunAccount): RunRow {
  const { runId, workDir, paths, status, holder, iterationCount, usage, task, lastError, deferred, firstTimestamp, lastTimestamp, startedAt, endedAt } = account;
  return { runId, workDir, paths, status, holder, iterationCount, usage, task, lastError, deferred, firstTimestamp, lastTimestamp, startedAt, endedAt };
}
