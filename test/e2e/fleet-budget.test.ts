// Budgets on the command line: a run's --max-cost-usd and a fleet's ledger stop what could overspend before it is sent (DEFERRED BUDGET_EXHAUSTED, exit 75); eight runs forced to reserve from the same state never overspend one ledger.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { latestState, usdOf } from "../../src/store/budget/ledger-state.js";
import { reply, startMockLlm, taskOf, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { delta, modelEnv, readEvents, setUpE2e, spawnDelta, writeAgent } from "./harness.js";

const PRICED = 'name: priced\nllm:\n  model: mock-model\n  max_tokens: 50\n  pricing: { input_per_million: 10, output_per_million: 100 }\ntools:\n  - name: echo\n    exec: "echo ${text}"\n';

const { root } = setUpE2e("delta-budget-");
let agent: string;
beforeAll(() => {
  agent = writeAgent(root, { agentYaml: PRICED }, "priced");
});

/** Each run calls echo twice, then answers: three model calls. */
function threeCalls(): Promise<MockLlm> {
  return startMockLlm((request) => (toolResultsOf(request).length < 2 ? reply.toolCalls([{ name: "echo", arguments: { text: `step ${toolResultsOf(request).length}` } }]) : reply.text(`done: ${taskOf(request)}`)));
}

interface Result {
  run_id: string;
  status: string;
  deferred?: { reason: string; resume_after: string | null; message: string };
  metrics: { usage: { total_cost_usd: number | null } };
}

const thoughts = (ws: string, runId: string): EventOf<"THOUGHT">[] => readEvents(ws, runId).filter((event: JournalEvent): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");

describe("a run's own budget", () => {
  it("a call that could pass --max-cost-usd is not sent: DEFERRED BUDGET_EXHAUSTED (75); continue --max-cost-usd raises it and the run goes on", async () => {
    const server = await threeCalls();
    const ws = join(root, "ws-run-budget");
    try {
      // A budget smaller than any call: nothing at all is sent, and the deferral says what the first call may cost.
      const probe = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "probe", "--max-cost-usd", "0.000001", "--format", "json", "count"], { env: modelEnv(server.baseUrl) });
      expect(probe.exitCode, probe.stderr).toBe(75);
      expect(server.requests).toHaveLength(0);
      const firstWorst = Number(/may cost up to \$([\d.]+)/.exec((JSON.parse(probe.stdout) as Result).deferred!.message)![1]);
      // Room for the first call, and not for the second's worst case on top of what the first cost.
      const limit = firstWorst * 1.05;
      const started = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "capped", "--max-cost-usd", String(limit), "--format", "json", "count"], { env: modelEnv(server.baseUrl) });
      expect(started.exitCode, started.stderr).toBe(75);
      const result = JSON.parse(started.stdout) as Result;
      expect(result.deferred).toMatchObject({ reason: "BUDGET_EXHAUSTED", resume_after: null });
      // Every request the server saw is a THOUGHT in the journal: nothing was sent that the budget did not admit.
      expect(thoughts(ws, "capped")).toHaveLength(1);
      expect(server.requests).toHaveLength(1);
      // It stopped only because the next call's worst case would have passed the limit.
      const worst = Number(/may cost up to \$([\d.]+)/.exec(result.deferred!.message)![1]);
      expect(result.metrics.usage.total_cost_usd! + worst).toBeGreaterThan(limit);
      expect(result.metrics.usage.total_cost_usd!).toBeLessThanOrEqual(limit);
      expect(result.deferred!.message).toContain("delta continue --run-id capped -w");
      const raised = await delta(["continue", "--run-id", "capped", "-w", ws, "--max-cost-usd", "1", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(raised.exitCode, raised.stderr).toBe(0);
      expect(JSON.parse(raised.stdout)).toMatchObject({ status: "COMPLETED", result: "done: count" });
      expect(thoughts(ws, "capped")).toHaveLength(3);
      // The raise is journaled: a later continue keeps it.
      const starts = readEvents(ws, "capped").filter((event): event is EventOf<"ENGINE_START"> => event.type === "ENGINE_START");
      expect(starts.map((start) => start.config.budget?.max_cost_usd)).toEqual([limit, 1]);
    } finally {
      await server.close();
    }
  });

  it("a cost budget without llm.pricing is refused before anything runs (126)", async () => {
    const unpriced = writeAgent(root, {}, "unpriced");
    const refused = await delta(["run", "--agent", unpriced, "-w", join(root, "ws-unpriced"), "--max-cost-usd", "1", "--format", "json", "go"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(refused.exitCode).toBe(126);
    expect(JSON.parse(refused.stdout)).toMatchObject({ status: "REFUSED", error: { type: "CONFIG_ERROR" } });
    expect(refused.stderr).toContain("agent.yaml gives no llm.pricing");
  });
});

describe("a fleet's ledger", () => {
  it("budget init, show and set: a second init and a path that is no ledger are refused (126)", async () => {
    const ledger = join(root, "cli.budget");
    const made = await delta(["budget", "init", ledger, "--limit-usd", "5"]);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stdout).toBe(`${ledger}: made with a limit of $5\n`);
    expect((await delta(["budget", "init", ledger, "--limit-usd", "5"])).exitCode).toBe(126);
    const shown = await delta(["budget", "show", ledger, "--format", "json"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ limit_usd: 5, spent_usd: 0, reserved_usd: 0, room_usd: 5, reservations: [] });
    expect((await delta(["budget", "set", ledger, "--limit-usd", "7.5"])).exitCode).toBe(0);
    expect((await delta(["budget", "show", ledger])).stdout).toMatch(/^limit {5}\$7\.5$/m);
    const notOne = await delta(["run", "--agent", agent, "-w", join(root, "ws-no-ledger"), "--budget-file", root, "go"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(notOne.exitCode).toBe(126);
    expect(notOne.stderr).toContain("is not a budget ledger");
    expect((await delta(["budget", "sho", ledger])).stderr).toContain("Did you mean show?");
  });

  it("eight runs forced to reserve from the same state never overspend it: the ledger's spent is their usage's cost, and every request was admitted", async () => {
    const server = await threeCalls();
    const ws = join(root, "ws-fleet");
    const ledger = join(root, "fleet.budget");
    expect((await delta(["budget", "init", ledger, "--limit-usd", "0.06"])).exitCode).toBe(0);
    // All eight stop after reading the ledger and computing their first reservation, before committing it.
    const gate = pauseGate("ledger-change-computed", root);
    const env = modelEnv(server.baseUrl, { ...gate.env, DELTA_BUDGET_FILE: ledger });
    try {
      const runs = Array.from({ length: 8 }, (_, index) => spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", `r${index}`, "--format", "json", `task ${index}`], { env, timeoutMs: 120_000 }));
      await gate.reached(8, 60_000);
      expect(latestState(ledger).seq).toBe(1);
      expect(server.requests).toHaveLength(0);
      gate.open();
      const ended = await Promise.all(runs);
      const results = ended.map((child) => {
        expect([0, 75], String(child.stderr)).toContain(child.exitCode);
        return JSON.parse(String(child.stdout)) as Result;
      });
      const state = latestState(ledger);
      expect(state.reservations).toEqual([]);
      expect(state.expired_nano_usd).toBe(0);
      // Never past the limit.
      expect(state.spent_nano_usd).toBeLessThanOrEqual(state.limit_nano_usd);
      // The ledger and the runs agree: what it counts spent is what their replies cost.
      const runsCost = results.reduce((sum, result) => sum + result.metrics.usage.total_cost_usd!, 0);
      expect(Math.abs(usdOf(state.spent_nano_usd) - runsCost)).toBeLessThan(1e-8);
      // Every request the server saw was admitted and answered: one THOUGHT each, as many as the ledger settled.
      const answered = results.reduce((sum, result) => sum + thoughts(ws, result.run_id).length, 0);
      expect(server.requests).toHaveLength(answered);
      expect(state.calls).toBe(answered);
      // The limit bit: some runs were stopped by it, each before a call that could have passed it.
      const deferred = results.filter((result) => result.status === "DEFERRED");
      expect(deferred.length).toBeGreaterThan(0);
      for (const result of deferred) expect(result.deferred).toMatchObject({ reason: "BUDGET_EXHAUSTED", resume_after: null });
      expect(deferred[0]!.deferred!.message).toContain(`delta budget set ${ledger} --limit-usd <dollars>`);
      const shown = JSON.parse((await delta(["budget", "show", ledger, "--format", "json"])).stdout) as { spent_usd: number; calls: number };
      expect(shown).toMatchObject({ spent_usd: usdOf(state.spent_nano_usd), calls: answered });
    } finally {
      gate.open();
      await server.close();
    }
  }, 180_000);

  it("a run killed mid-call holds its reservation no longer: the next run expires it (charged in full, the call may have been billed) instead of waiting for it", async () => {
    const ledger = join(root, "killed.budget");
    expect((await delta(["budget", "init", ledger, "--limit-usd", "1"])).exitCode).toBe(0);
    const ws = join(root, "ws-killed");
    // The first run's call never answers: it is killed while the call is in flight.
    const hanging = await startMockLlm((request) => (taskOf(request) === "hangs" ? { kind: "hang" } : reply.text("done")));
    try {
      const env = modelEnv(hanging.baseUrl, { DELTA_BUDGET_FILE: ledger });
      const doomed = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "hangs", "hangs"], { env });
      const deadline = Date.now() + 30_000;
      while (hanging.requests.length === 0) {
        if (Date.now() > deadline) throw new Error("the first run never sent its call");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const held = latestState(ledger).reservations;
      expect(held.map((reservation) => reservation.run_id)).toEqual(["hangs"]);
      doomed.kill("SIGKILL");
      await doomed;
      // With the dead run's reservation held, the next call does not fit: it would wait for it to settle, and it never will.
      expect((await delta(["budget", "set", ledger, "--limit-usd", String(usdOf(held[0]!.nano_usd) * 1.5)])).exitCode).toBe(0);
      const next = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "next", "--format", "json", "next"], { env, timeoutMs: 60_000 });
      const state = latestState(ledger);
      expect(state.expired_nano_usd).toBe(held[0]!.nano_usd);
      expect(state.reservations).toEqual([]);
      // Charged in full, the ledger had no room left for the next call's worst case: it waited for nothing and deferred.
      expect(next.exitCode, next.stderr).toBe(75);
      expect(JSON.parse(next.stdout)).toMatchObject({ deferred: { reason: "BUDGET_EXHAUSTED" } });
    } finally {
      await hanging.close();
    }
  });
});
