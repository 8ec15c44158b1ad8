// Whether a run's model calls go through the provider's batch API, decided before the run starts: --batch, llm.batch, or the batching the run was started with; refused (126) for an endpoint with no batch API.
import { ConfigError, UsageError } from "../errors.js";
import type { BatchApi, RunBudget } from "../journal/events.js";
import { batchApiFor } from "../llm/batch/batch-api.js";
import type { ProviderChoice } from "../llm/provider-choice.js";
import type { LlmConfig } from "../llm/settings-schema.js";
import type { DriveOptions } from "./drive-options.js";

export interface RunBatchMode {
  api: BatchApi;
  /** --live: this invocation sends its calls live, the one waiting in a batch included. */
  live: boolean;
  /** --submit: a queued call is sent in a batch of its own at once. */
  submit: boolean;
}

/** `journaled`: the batch API the run's last ENGINE_START names (a continue keeps it). */
export function batchMode(llm: LlmConfig, drive: Pick<DriveOptions, "batch" | "submit" | "live">, provider: ProviderChoice, journaled: BatchApi | undefined, configPath: string, budget: RunBudget): RunBatchMode | null {
  // A replay answers each call at once from its recording.
  const endpoint = provider.describe.replay === undefined ? provider.describe.endpoint : undefined;
  const setting = journaled ?? (drive.batch ? (typeof llm.batch === "string" ? llm.batch : true) : llm.batch);
  const source = journaled !== undefined ? "The run (started with batching)" : drive.batch ? "--batch" : `llm.batch in ${configPath}`;
  const api = endpoint === undefined ? null : batchApiFor(setting, endpoint, source);
  if (api === null) {
    if (drive.submit) throw new UsageError("--submit sends the run's queued model call in a batch: give it with --batch (or an agent whose llm.batch is set).");
    return null;
  }
  if (budget.ledger !== null && !drive.live) {
    throw new ConfigError(
      `The run's calls go through the provider's batch API, and its budget ledger ${budget.ledger} cannot count them yet (a batch's reply is collected by another process, long after the call). ` +
        "Run the batch without --budget-file (and without DELTA_BUDGET_FILE); the run's own limits (--max-cost-usd, llm.budget) do hold its batched calls.",
    );
  }
  if (drive.submit && drive.live) throw new UsageError("--submit queues the call for a batch and --live sends it live: give one of them.");
  return { api, live: Boolean(drive.live), submit: Boolean(drive.submit) };
}
