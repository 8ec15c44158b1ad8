// How `delta run` and `delta continue` alike drive a process: the options the command line gives both.
import type { ReplayCheckMode } from "../llm/replay.js";
import type { ActivitySink } from "../loop/activity.js";
import type { HumanQuestion } from "../loop/ports.js";
import type { AppendListener } from "../store/run-files.js";
import type { SandboxMode } from "../process/sandbox/policy-schema.js";
import type { BudgetFlags } from "./run-budget.js";

/** How `delta run` and `delta continue` alike drive a process: limits, model source, signal and output. */
export interface DriveOptions {
  maxIterations: number;
  replay?: string;
  /** --until-divergence or --replay-strict (with --replay): each request checked against the recorded one. */
  replayCheck?: ReplayCheckMode;
  /** --model: overrides DELTA_MODEL and llm.model for this invocation. */
  model?: string;
  /** --sandbox MODE: the mode of every tool's and server's box for this invocation (continue journals it). */
  sandbox?: SandboxMode;
  /** --base-url: the model endpoint for this invocation, over .env files, the environment and agent.yaml. */
  baseUrl?: string;
  /** --accept-endpoint: `continue` may send the run to another endpoint than the one it was started with. */
  acceptEndpoint?: boolean;
  /** --batch: this run's model calls go through the provider's batch API (continue keeps it). */
  batch?: boolean;
  /** --submit (with batching): the run sends its own queued call in a batch at once. */
  submit?: boolean;
  /** --live (continue): a call waiting in a batch is sent live instead, and this invocation queues none. */
  live?: boolean;
  /** --max-cost-usd and --budget-file (or DELTA_BUDGET_FILE): the run's dollar limit from now on, and the fleet's ledger. */
  budget?: BudgetFlags;
  signal: AbortSignal;
  progress: (line: string) => void;
  /** What the engine is doing now, for a status line; text a model streams arrives here too. */
  activity?: ActivitySink;
  verbose: boolean;
  warn: (line: string) => void;
  askInteractively?: (question: HumanQuestion) => Promise<string>;
  /** Told each event this process appends to the run's journal, from its first (`--format stream-json` prints each line). */
  appended?: AppendListener;
}
