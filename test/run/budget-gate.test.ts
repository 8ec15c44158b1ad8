// The budget gate, offline: a call's worst case (prompt bound, reply room, priced) against the run's limits over every invocation and the fleet's ledger; settlements by what each attempt cost.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LlmRequest } from "../../src/conversation.js";
import { BudgetLedgerError, ConfigError, DeferredError } from "../../src/errors.js";
import type { JournalEvent, NewEvent, RunBudget } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState } from "../../src/journal/run-state.js";
import { LlmConfigSchema } from "../../src/llm/settings-schema.js";
import { budgetGate } from "../../src/run/budget-gate.js";
import { callWorstCase, promptTokenBound, replyRoom } from "../../src/run/call-reservation.js";
import { resolveRunBudget } from "../../src/run/run-budget.js";
import { initLedger, openLedger } from "../../src/store/budget/ledger.js";
import { latestState, nanoUsd } from "../../src/store/budget/ledger-state.js";

const PRICING = { input_per_million: 1, output_per_million: 10 };
const llm = LlmConfigSchema.parse({ model: "mock-model", max_tokens: 1000, pricing: PRICING });
const request: LlmRequest = { model: "mock-model", messages: [{ role: "user", content: "x".repeat(2000) }], tools: [], params: {} };
const NO_BUDGET: RunBudget = { max_cost_usd: null, max_tokens: null, ledger: null };

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "budget-gate-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A run whose journal holds these THOUGHTs' usage, as earlier invocations left it. */
function journal(events: NewEvent[]) {
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  events.forEach((event, index) => tracker.see({ seq: index + 1, timestamp: "2026-01-01T00:00:00.000Z", ...event } as JournalEvent));
  return state;
}

const start = (pricing = PRICING): NewEvent => ({ type: "ENGINE_START", run_id: "r", agent_home: "/a", work_dir: "/w", config: { pricing }, engine_version: "t" });
const thought = (input: number, output: number): NewEvent => ({ type: "THOUGHT", iteration: 1, content: "x", tool_calls: [], usage: { input_tokens: input, output_tokens: output }, model: "mock-model" });

function gate(budget: Partial<RunBudget>, events: NewEvent[], ledger: ReturnType<typeof openLedger> | null = null, said: string[] = []) {
  return budgetGate({ budget: { ...NO_BUDGET, ...budget }, llm, protocol: "openai", priceOf: () => PRICING, runState: journal(events), ledger, raiseCommand: "delta continue --run-id r -w /w --max-cost-usd '<dollars>'", progress: (line) => said.push(line), signal: new AbortController().signal });
}

async function deferralOf(promise: Promise<unknown>): Promise<DeferredError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof DeferredError)) throw new Error(`expected a deferral, got ${String(err)}`);
  return err;
}

describe("a call's worst case", () => {
  it("is its prompt, two bytes a token plus the provider's framing, and the reply's room: llm.max_tokens, else the protocol's, the model's limit, or 4096", () => {
    expect(promptTokenBound(request)).toBe(Math.ceil(Buffer.byteLength(JSON.stringify(request.messages) + "[]null") / 2) + 1024);
    expect(replyRoom(llm, "openai", "mock-model")).toEqual({ tokens: 1000, source: "llm.max_tokens" });
    const bare = LlmConfigSchema.parse({ model: "m" });
    expect(replyRoom(bare, "anthropic", "claude-x")).toEqual({ tokens: 8192, source: "the protocol's max_tokens" });
    expect(replyRoom(bare, "openai", "gpt-4o-mini")).toEqual({ tokens: 16_384, source: "the model's output limit" });
    expect(replyRoom(bare, "openai", "my-local-model")).toEqual({ tokens: 4096, source: "unknown" });
  });

  it("is priced with every prompt token at its dearest price (a cache write may cost more than input)", () => {
    const worst = callWorstCase(request, { tokens: 1000, source: "llm.max_tokens" }, { input_per_million: 1, output_per_million: 10, cache_write_input_per_million: 1.25 });
    expect(worst.usd).toBeCloseTo((promptTokenBound(request) * 1.25 + 1000 * 10) / 1e6, 12);
  });

  it("says once how the reply's room was chosen when llm.max_tokens does not set it", async () => {
    const said: string[] = [];
    const bare = budgetGate({ budget: { ...NO_BUDGET, max_tokens: 10_000_000 }, llm: LlmConfigSchema.parse({ model: "my-local-model" }), protocol: "openai", priceOf: () => undefined, runState: journal([]), ledger: null, raiseCommand: "", progress: (line) => said.push(line), signal: new AbortController().signal });
    await bare.admit({ ...request, model: "my-local-model" }, 1);
    await bare.admit({ ...request, model: "my-local-model" }, 2);
    expect(said).toEqual(["[budget] llm.max_tokens is not set and my-local-model's output limit is unknown: each model call reserves 4096 reply tokens, and a longer reply would cost more than was reserved; set llm.max_tokens"]);
  });
});

describe("the run's own limits, over every invocation", () => {
  it("admits a call that fits and defers BUDGET_EXHAUSTED one that could pass max_cost_usd, naming the command that raises it", async () => {
    const worst = callWorstCase(request, replyRoom(llm, "openai", "mock-model"), PRICING).usd!;
    // Earlier invocations spent $0.02 (2,000 output tokens at $10 a million).
    const spent: NewEvent[] = [start(), thought(0, 200), start(), thought(0, 1800)];
    await gate({ max_cost_usd: 0.02 + worst + 1e-9 }, spent).admit(request, 3);
    const err = await deferralOf(gate({ max_cost_usd: 0.02 + worst - 1e-6 }, spent).admit(request, 3));
    expect(err.deferral).toMatchObject({ reason: "BUDGET_EXHAUSTED", resumeAfter: null });
    expect(err.message).toMatch(/^The run's budget of \$0\.0\d+ has \$0\.0\d+ left, and the next model call may cost up to \$0\.0\d+ \(at most \d+ prompt tokens, estimated from its size, and 1000 reply tokens\); it was not sent\. Raise the budget to go on: delta continue --run-id r -w \/w --max-cost-usd '<dollars>'$/);
  });

  it("counts what earlier attempts were charged beyond their usage, and the token limit", async () => {
    const { tokens: worstTokens, usd: worstUsd } = callWorstCase(request, replyRoom(llm, "openai", "mock-model"), PRICING);
    const charged: NewEvent = { type: "LLM_ATTEMPT_FAILED", iteration: 1, attempt: 1, started_at: "t", duration_ms: 1, reason: "timeout", retry_in_ms: null, budget_charge: { usd: 0.5, tokens: 100 } };
    await gate({ max_cost_usd: 0.5 + worstUsd! + 1e-9 }, [start(), charged]).admit(request, 1);
    await expect(gate({ max_cost_usd: 0.5 + worstUsd! - 1e-6 }, [start(), charged]).admit(request, 1)).rejects.toThrow(DeferredError);
    await gate({ max_tokens: 100 + worstTokens }, [start(), charged]).admit(request, 1);
    const err = await deferralOf(gate({ max_tokens: 99 + worstTokens }, [start(), charged]).admit(request, 1));
    expect(err.message).toContain("token budget (llm.budget.max_tokens");
  });
});

describe("a call priced at the model it asks", () => {
  it("admits a fallback's call at the fallback's own price, which the primary's would not fit", async () => {
    const prices: Record<string, typeof PRICING> = { "mock-model": { input_per_million: 1000, output_per_million: 1000 }, cheap: PRICING };
    const gate = budgetGate({ budget: { ...NO_BUDGET, max_cost_usd: 0.5 }, llm, protocol: "openai", priceOf: (model) => prices[model], runState: journal([]), ledger: null, raiseCommand: "", progress: () => {}, signal: new AbortController().signal });
    await deferralOf(gate.admit(request, 1));
    const admitted = await gate.admit({ ...request, model: "cheap" }, 1);
    expect(admitted.settle({ reply: { content: "x", tool_calls: [], usage: null, model: "cheap", finish_reason: "stop" } })?.usd).toBeCloseTo(callWorstCase(request, replyRoom(llm, "openai", "cheap"), PRICING).usd!, 12);
  });
});

describe("settling an attempt", () => {
  it("in the ledger: a reply by its usage's price, an error status or a connection never made at nothing, a timeout at its whole reservation (returned as the charge)", async () => {
    const ledger = join(root, "fleet");
    initLedger(ledger, nanoUsd(10));
    const account = openLedger(ledger, { runId: "r", workDir: "/w", progress: () => {} });
    const worst = callWorstCase(request, replyRoom(llm, "openai", "mock-model"), PRICING);
    const port = gate({ ledger }, [start()], account);
    const replied = await port.admit(request, 1);
    expect(latestState(ledger).reservations).toMatchObject([{ nano_usd: nanoUsd(worst.usd!, "up") }]);
    expect(replied.settle({ reply: { content: "x", tool_calls: [], usage: { input_tokens: 1000, output_tokens: 100 }, model: "m", finish_reason: "stop" } })).toBeNull();
    expect(latestState(ledger)).toMatchObject({ spent_nano_usd: nanoUsd(0.002), reservations: [] });
    expect((await port.admit(request, 2)).settle({ failure: { kind: "transient", reason: "HTTP 500", status: 500, unbilled: true } })).toBeNull();
    expect((await port.admit(request, 2)).settle({ failure: { kind: "transient", reason: "connection failed", unbilled: true } })).toBeNull();
    expect(latestState(ledger).spent_nano_usd).toBe(nanoUsd(0.002));
    expect((await port.admit(request, 2)).settle({ failure: { kind: "transient", reason: "no answer within 5 ms" } })).toEqual({ usd: worst.usd, tokens: worst.tokens });
    expect(latestState(ledger).spent_nano_usd).toBe(nanoUsd(0.002) + nanoUsd(worst.usd!));
    account.close();
  });

  it("defers BUDGET_EXHAUSTED when the ledger has no room, naming the ledger and the command that raises its limit", async () => {
    const ledger = join(root, "fleet");
    initLedger(ledger, nanoUsd(0.001));
    const account = openLedger(ledger, { runId: "r", workDir: "/w", progress: () => {} });
    const err = await deferralOf(gate({ ledger }, [start()], account).admit(request, 1));
    expect(err.message).toContain(`The budget ledger ${ledger} has $0.001 left of its $0.001 limit`);
    expect(err.message).toContain(`delta budget set ${ledger} --limit-usd <dollars>`);
    expect(latestState(ledger).reservations).toEqual([]);
  });
});

describe("the run's budget for an invocation", () => {
  const agent = { llm, tools: [], mcpServers: [], home: "/agent" };
  const place = (workDir: string) => ({ workDir, sandbox: { agent: null, tools: {}, mcp_servers: {} }, home: root });

  it("takes this invocation's --max-cost-usd, else what the run journaled, else llm.budget", () => {
    const withBudget = { ...agent, llm: LlmConfigSchema.parse({ model: "m", pricing: PRICING, budget: { max_cost_usd: 1, max_tokens: 5000 } }) };
    expect(resolveRunBudget(withBudget, {}, undefined, place(root))).toEqual({ max_cost_usd: 1, max_tokens: 5000, ledger: null });
    expect(resolveRunBudget(withBudget, {}, { max_cost_usd: 3, max_tokens: 7000, ledger: null }, place(root))).toEqual({ max_cost_usd: 3, max_tokens: 7000, ledger: null });
    expect(resolveRunBudget(withBudget, { maxCostUsd: 9 }, { max_cost_usd: 3, max_tokens: 7000, ledger: null }, place(root))).toMatchObject({ max_cost_usd: 9 });
  });

  it("refuses a cost budget without a price (126)", () => {
    const unpriced = { ...agent, llm: LlmConfigSchema.parse({ model: "m" }) };
    expect(() => resolveRunBudget(unpriced, { maxCostUsd: 1 }, undefined, place(root))).toThrow(ConfigError);
    expect(() => resolveRunBudget(unpriced, { maxCostUsd: 1 }, undefined, place(root))).toThrow(/agent\.yaml gives no llm\.pricing/);
    expect(resolveRunBudget(unpriced, {}, undefined, place(root))).toEqual(NO_BUDGET);
  });

  it("refuses a cost budget when a model of llm.fallback has no price in a per-model llm.pricing, naming it", () => {
    const partly = { ...agent, llm: LlmConfigSchema.parse({ model: "m", fallback: ["cheap"], pricing: { m: PRICING } }) };
    expect(() => resolveRunBudget(partly, { maxCostUsd: 1 }, undefined, place(root))).toThrow(/no price in llm\.pricing for cheap/);
  });

  it("refuses a ledger that a boxed tool of the run could write: inside a workspace-write workspace, or a write: root", () => {
    const workDir = join(root, "ws");
    const inside = join(workDir, "fleet.budget");
    initLedger(join(root, "outside.budget"), nanoUsd(1));
    mkdirSync(workDir);
    initLedger(inside, nanoUsd(1));
    const boxed = { workDir, sandbox: { agent: { mode: "workspace-write" as const }, tools: {}, mcp_servers: {} }, home: root };
    const echo = { ...agent, tools: [{ name: "echo" }] } as unknown as typeof agent;
    expect(() => resolveRunBudget(echo, { budgetFile: inside }, undefined, boxed)).toThrow(BudgetLedgerError);
    expect(() => resolveRunBudget(echo, { budgetFile: inside }, undefined, boxed)).toThrow(/lies inside .*which the run's boxed tools may write/);
    expect(resolveRunBudget(echo, { budgetFile: join(root, "outside.budget") }, undefined, boxed).ledger).toBe(join(root, "outside.budget"));
    const readOnlyWithWrite = { ...boxed, sandbox: { agent: { mode: "read-only" as const, write: [root] }, tools: {}, mcp_servers: {} } };
    expect(() => resolveRunBudget(echo, { budgetFile: join(root, "outside.budget") }, undefined, readOnlyWithWrite)).toThrow(BudgetLedgerError);
    // Unboxed, a tool could write anywhere anyway: the ledger is accepted where it is.
    expect(resolveRunBudget(echo, { budgetFile: inside }, undefined, place(workDir)).ledger).toBe(inside);
  });

  it("refuses a path that is not a ledger", () => {
    expect(() => resolveRunBudget(agent, { budgetFile: root }, undefined, place(root))).toThrow(/is not a budget ledger/);
  });
});

