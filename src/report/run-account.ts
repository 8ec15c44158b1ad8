// One run read from its files for a person: the journal's events grouped by iteration, usage totals, status, and who holds it.
import type { EventOf, JournalEvent, RunStatus } from "../journal/events.js";
import { readJournal } from "../journal/reader.js";
import { createFoldTracker, type EventFold } from "../journal/fold.js";
import { trackRunState } from "../journal/run-state.js";
import { errorMessage } from "../errors.js";
import { assessOwner, type HolderAssessment } from "../store/lease/judge.js";
import { readCurrentOwner } from "../store/lease/take-run.js";
import { runIdsIn } from "../store/list-runs.js";
import { runPaths, type RunPaths } from "../store/run-dir.js";
import { readMetadata, type RunMetadata } from "../store/run-metadata.js";
import { pricingOf, type Pricing } from "../journal/usage-totals.js";
import { shownUsage } from "./priced-usage.js";
import { runUsageShown, type UsageTotals } from "./usage-fields.js";

interface ActionAccount {
  request: EventOf<"ACTION_REQUEST">;
  /** null while the tool runs, or when the engine died before recording it. */
  result: EventOf<"ACTION_RESULT"> | null;
}

interface IterationAccount {
  iteration: number;
  thought: EventOf<"THOUGHT">;
  usage: UsageTotals;
  actions: ActionAccount[];
}

export interface RunAccount {
  runId: string;
  paths: RunPaths;
  workDir: string;
  events: JournalEvent[];
  status: RunStatus;
  /** For a RUNNING run: whether its engine process still lives (judged from the run's owner record). */
  holder: HolderAssessment | null;
  metadata: RunMetadata | null;
  task: string | null;
  agentName: string | null;
  iterations: IterationAccount[];
  /** The journal's last ERROR: why a FAILED or INTERRUPTED run stopped. */
  lastError: EventOf<"ERROR"> | null;
  /** The open ask_human question of a run WAITING_FOR_INPUT. */
  waiting: EventOf<"HUMAN_INPUT_REQUEST"> | null;
  usage: UsageTotals;
  /** First and last event, epoch ms. */
  startedAt: number | null;
  endedAt: number | null;
}

/** Reads a run; a damaged metadata.json is only a warning, since the journal is the authority. */
export function loadRunAccount(workDir: string, runId: string, paths: RunPaths, warn: (line: string) => void): RunAccount {
  const events = readJournal(paths.journal, { warn });
  let metadata: RunMetadata | null = null;
  try {
    metadata = readMetadata(paths);
  } catch (err) {
    warn(`run ${runId}: ${errorMessage(err)}`);
  }
  return accountOf(workDir, runId, paths, events, metadata);
}

/** The account of events already read (e.g. by a follower). */
export function accountOf(workDir: string, runId: string, paths: RunPaths, events: JournalEvent[], metadata: RunMetadata | null): RunAccount {
  // One pass: the run state and the iterations are folds on one tracker.
  const tracker = createFoldTracker();
  const runState = trackRunState(tracker);
  const grouped = tracker.register(iterationsFold);
  tracker.advance(events);
  const state = runState();
  const { iterations } = grouped();
  const usage = runUsageShown(state.usage.total, iterations.map((iteration) => iteration.usage));
  const start = events.find((event): event is EventOf<"ENGINE_START"> => event.type === "ENGINE_START");
  return {
    runId,
    paths,
    workDir,
    events,
    status: state.status,
    holder: state.status === "RUNNING" ? assessOwner(readCurrentOwner(paths)) : null,
    metadata,
    task: state.initialMessage,
    agentName: metadata?.agent_name ?? agentNameOf(start),
    iterations,
    lastError: state.lastError,
    waiting: state.waiting,
    usage,
    startedAt: timeOf(events[0]),
    endedAt: timeOf(events.at(-1)),
  };
}

interface Grouped {
  iterations: IterationAccount[];
  /** Each process prices its own calls with the pricing its ENGINE_START recorded. */
  pricing: Pricing | undefined;
  byAction: Map<string, ActionAccount>;
}

/** The events grouped by iteration: each THOUGHT with its usage as priced and the actions it asked for. */
const iterationsFold: EventFold<Grouped> = {
  initial: () => ({ iterations: [], pricing: undefined, byAction: new Map() }),
  step(grouped, event) {
    switch (event.type) {
      case "ENGINE_START":
        grouped.pricing = pricingOf(event);
        return grouped;
      case "THOUGHT":
        grouped.iterations.push({ iteration: event.iteration, thought: event, usage: shownUsage(event, grouped.pricing), actions: [] });
        return grouped;
      case "ACTION_REQUEST": {
        const action: ActionAccount = { request: event, result: null };
        grouped.byAction.set(event.action_id, action);
        grouped.iterations.at(-1)?.actions.push(action);
        return grouped;
      }
      case "ACTION_RESULT": {
        const action = grouped.byAction.get(event.action_id);
        if (action) action.result = event;
        return grouped;
      }
      case "USER_MESSAGE":
      case "LLM_ATTEMPT_FAILED":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "ENGINE_END":
        return grouped;
      default: {
        const unknown: never = event;
        throw new Error(`run account: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

function agentNameOf(start: EventOf<"ENGINE_START"> | undefined): string | null {
  const name = start?.config.agent_name;
  return typeof name === "string" ? name : null;
}

/** Epoch ms of an event's timestamp, or null when it is not a date. */
export function timeOf(event: JournalEvent | undefined): number | null {
  if (!event) return null;
  const ms = Date.parse(event.timestamp);
  return Number.isNaN(ms) ? null : ms;
}

/** Every readable run of some workspaces; a run that cannot be read is reported through warn and left out. */
export function loadWorkspaceAccounts(workDirs: readonly string[], warn: (line: string) => void): RunAccount[] {
  return workDirs.flatMap((workDir) =>
    runIdsIn(workDir).flatMap((runId) => {
      try {
        return [loadRunAccount(workDir, runId, runPaths(workDir, runId), warn)];
      } catch (err) {
        warn(`run ${runId} in ${workDir}: skipped: ${errorMessage(err)}`);
        return [];
      }
    }),
  );
}
