// A run's budget for this invocation: its limits (this invocation's flag, else what the run journaled, else llm.budget) and its fleet's ledger, checked before anything runs.
import { isAbsolute, resolve } from "node:path";
import { chainModels, pricingOf } from "../llm/settings-schema.js";
import type { AgentPackage } from "../agent/load.js";
import { BudgetLedgerError, ConfigError } from "../errors.js";
import type { RunBudget } from "../journal/events.js";
import { latestState } from "../store/budget/ledger-state.js";
import type { RunSandbox } from "../process/sandbox/policy-schema.js";
import { hookPolicy, serverPolicy, toolPolicy } from "../process/sandbox/policy.js";
import { resolvedWithin, writableRoots } from "./tool-box.js";

/** What the command line gives one invocation: a dollar limit for the run, and a ledger. */
export interface BudgetFlags {
  /** --max-cost-usd: the run's limit over all its invocations, from now on (continue raises it with this). */
  maxCostUsd?: number;
  /** --budget-file, else DELTA_BUDGET_FILE: the fleet's ledger. */
  budgetFile?: string;
}

/**
 * The run's budget for this invocation. `journaled`: what the run's last invocation held (continue keeps it unless
 * told otherwise), undefined for a new run. Refuses (126) a cost budget without a price, a ledger that is not one, and
 * a ledger a boxed tool of the run could write.
 */
export function resolveRunBudget(
  agent: Pick<AgentPackage, "llm" | "tools" | "mcpServers" | "home">,
  flags: BudgetFlags,
  journaled: RunBudget | undefined,
  place: { workDir: string; sandbox: RunSandbox; home: string },
): RunBudget {
  const given = flags.budgetFile ?? journaled?.ledger ?? undefined;
  const budget: RunBudget = {
    max_cost_usd: flags.maxCostUsd ?? journaled?.max_cost_usd ?? agent.llm.budget?.max_cost_usd ?? null,
    max_tokens: journaled?.max_tokens ?? agent.llm.budget?.max_tokens ?? null,
    ledger: given === undefined ? null : isAbsolute(given) ? given : resolve(given),
  };
  const unpriced = chainModels(agent.llm).filter((model) => pricingOf(agent.llm.pricing, model) === undefined);
  if ((budget.max_cost_usd !== null || budget.ledger !== null) && unpriced.length > 0) {
    const which = budget.ledger !== null ? `the budget ledger ${budget.ledger}` : `a cost budget of $${budget.max_cost_usd}`;
    const missing = agent.llm.pricing === undefined ? "no llm.pricing" : `no price in llm.pricing for ${unpriced.join(", ")}`;
    throw new ConfigError(
      `The run has ${which}, but agent.yaml gives ${missing}: each model call's worst case is priced before it is sent, so a cost budget needs a price for every model it may ask (llm.model and llm.fallback). ` +
        "Add llm.pricing (input_per_million and output_per_million, in USD) to agent.yaml: one price, or one per model name.",
    );
  }
  if (budget.ledger !== null) checkLedger(budget.ledger, agent, place);
  return budget;
}

/** True when the budget asks nothing of a model call. */
export function unlimited(budget: RunBudget): boolean {
  return budget.max_cost_usd === null && budget.max_tokens === null && budget.ledger === null;
}

/** The ledger must be one (made by `delta budget init`), outside every folder a box of the run may write: a tool must not raise its own limit. */
function checkLedger(ledger: string, agent: Pick<AgentPackage, "tools" | "mcpServers" | "home">, place: { workDir: string; sandbox: RunSandbox; home: string }): void {
  latestState(ledger);
  const policies = [...agent.tools.map((tool) => toolPolicy(place.sandbox, tool.name)), ...agent.mcpServers.map((server) => serverPolicy(place.sandbox, server.name)), hookPolicy(place.sandbox)].filter((policy) => policy !== null);
  const root = writableRoots(policies, { workDir: place.workDir, agentHome: agent.home }, place.home).find((writable) => resolvedWithin(ledger, writable));
  if (root !== undefined) {
    throw new BudgetLedgerError(
      `The budget ledger ${ledger} lies inside ${root}, which the run's boxed tools may write: a tool could change the ledger and lift its own limit. Put the ledger outside every writable root of the box (e.g. beside the workspaces, not in one).`,
    );
  }
}
