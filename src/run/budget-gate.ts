// The run's budgets as the loop's port: before each model attempt its worst case is checked against the run's own limits (over every invocation) and reserved in the fleet's ledger; after it, settled with what it cost.
import { DeferredError } from "../errors.js";
import type { Pricing, RunBudget } from "../journal/events.js";
import type { RunState } from "../journal/run-state.js";
import { callCost, costWithFallback } from "../journal/usage-totals.js";
import type { LlmConfig } from "../llm/settings-schema.js";
import type { AttemptOutcome, BudgetCharge, ProviderName } from "../llm/types.js";
import type { LoopBudget } from "../loop/ports.js";
import { nanoUsd, usdOf } from "../store/budget/ledger-state.js";
import type { LedgerAccount, LedgerTicket } from "../store/budget/ledger.js";
import { callWorstCase, replyRoom, replyRoomNote, type CallWorstCase } from "./call-reservation.js";
import { unlimited } from "./run-budget.js";

/** A port that admits every attempt, for a run without a budget. */
const NO_BUDGET: LoopBudget = { admit: async () => ({ settle: () => null }) };

interface GateGround {
  budget: RunBudget;
  llm: LlmConfig;
  protocol: ProviderName;
  /** The price of a call to `model` (llm.pricing, given once or per model). */
  priceOf: (model: string) => Pricing | undefined;
  /** The run's state as the journal says now: what its calls have cost, every invocation's. */
  runState(): RunState;
  /** This process's account with the ledger, when the run has one. */
  ledger: LedgerAccount | null;
  /** The `delta continue` that raises the run's limit. */
  raiseCommand: string;
  progress: (line: string) => void;
  signal: AbortSignal;
}

export function budgetGate(ground: GateGround): LoopBudget {
  if (unlimited(ground.budget)) return NO_BUDGET;
  let noted = false;
  return {
    async admit(request) {
      const room = replyRoom(ground.llm, ground.protocol, request.model);
      const note = noted ? null : replyRoomNote(room, request.model);
      noted = true;
      if (note !== null) ground.progress(note);
      // Each call is priced at the model it asks: a fallback's own price once the primary gave up.
      const pricing = ground.priceOf(request.model);
      const worst = callWorstCase(request, room, pricing);
      checkRunLimits(ground, worst, room.tokens, pricing);
      const ticket = ground.ledger === null ? null : await reserve(ground, ground.ledger, worst);
      return { settle: (outcome) => settle(pricing, worst, ticket, outcome) };
    },
  };
}

/** Defers the run (nothing is sent) when the call could take it past its own dollar or token limit. */
function checkRunLimits(ground: GateGround, worst: CallWorstCase, replyTokens: number, pricing: Pricing | undefined): void {
  const { max_cost_usd: maxCost, max_tokens: maxTokens } = ground.budget;
  const usage = ground.runState().usage;
  const prompt = worst.tokens - replyTokens;
  const call = `the next model call may cost up to ${worst.usd === null ? "?" : dollars(worst.usd)} (at most ${prompt} prompt tokens, estimated from its size, and ${replyTokens} reply tokens)`;
  if (maxCost !== null && worst.usd !== null && pricing !== undefined) {
    const spent = costWithFallback(usage.total, pricing) + usage.charged.usd;
    if (spent + worst.usd > maxCost) {
      throw exhausted(`The run's budget of ${dollars(maxCost)} has ${dollars(Math.max(0, maxCost - spent))} left, and ${call}; it was not sent. Raise the budget to go on: ${ground.raiseCommand}`);
    }
  }
  if (maxTokens !== null) {
    const used = usage.total.input_tokens + usage.total.output_tokens + usage.charged.tokens;
    if (used + worst.tokens > maxTokens) {
      throw exhausted(`The run's token budget (llm.budget.max_tokens ${maxTokens}) has ${Math.max(0, maxTokens - used)} tokens left, and ${call}; it was not sent. Raise llm.budget.max_tokens in agent.yaml for new runs; this run keeps the limit it started with.`);
    }
  }
}

/** Reserves the call's worst case in the ledger, waiting while calls in flight hold the room; defers the run when the ledger is full. */
async function reserve(ground: GateGround, ledger: LedgerAccount, worst: CallWorstCase): Promise<LedgerTicket> {
  const held = await ledger.reserve(nanoUsd(worst.usd ?? 0, "up"), ground.signal);
  if (!("full" in held)) return held;
  throw exhausted(
    `The budget ledger ${ledger.path} has ${dollars(usdOf(Math.max(0, held.limitNano - held.spentNano)))} left of its ${dollars(usdOf(held.limitNano))} limit, ` +
      `and the next model call may cost up to ${dollars(usdOf(held.neededNano))}; it was not sent. Raise the fleet's limit (delta budget set ${ledger.path} --limit-usd <dollars>), then \`delta continue --due\` goes on.`,
  );
}

/**
 * What an ended attempt cost, settled in the ledger; returns what is counted beyond reported usage. A reply is priced by
 * its usage. An attempt answered by an error status, or one that never reached the server, cost nothing. Any other (a
 * reply without usage, a timeout, a cut stream) may have been billed with nothing to say how much: counted in full.
 */
function settle(pricing: Pricing | undefined, worst: CallWorstCase, ticket: LedgerTicket | null, outcome: AttemptOutcome): BudgetCharge | null {
  const charge: BudgetCharge = { usd: worst.usd, tokens: worst.tokens };
  let costUsd: number;
  let counted: BudgetCharge | null;
  if ("reply" in outcome && outcome.reply.usage !== null) {
    costUsd = callCost(outcome.reply.usage, pricing) ?? worst.usd ?? 0;
    counted = null;
  } else if ("failure" in outcome && outcome.failure.unbilled === true) {
    costUsd = 0;
    counted = null;
  } else {
    costUsd = worst.usd ?? 0;
    counted = charge;
  }
  ticket?.settle(nanoUsd(costUsd));
  return counted;
}

function exhausted(message: string): DeferredError {
  return new DeferredError({ reason: "BUDGET_EXHAUSTED", resumeAfter: null, message });
}

function dollars(usd: number): string {
  return `$${Math.round(usd * 1e6) / 1e6}`;
}
