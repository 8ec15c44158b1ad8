// A run that must wait ends DEFERRED, offline: a limit the model call defers on or a budget that admits no call end the loop with the deferral and lose nothing; continued, it re-asks nothing it already has.
import { describe, expect, it } from "vitest";
import { compileOutputSchema } from "../../src/agent/output-schema.js";
import { DeferredError, type Deferral } from "../../src/errors.js";
import type { NewEvent } from "../../src/journal/events.js";
import { failedAttemptEvent } from "../../src/loop/failed-attempt.js";
import type { LoopBudget } from "../../src/loop/ports.js";
import { calls, scriptedRun, text } from "./scripted-loop.js";

const RATE_LIMITED: Deferral = { reason: "RATE_LIMITED", resumeAfter: "2030-01-01T01:00:00.000Z", message: "rate limited: wait 3600 s (retry-after)" };

/** How the run's files record a deferred end and the next invocation's start (what stint.ts and engine-start.ts append). */
function deferredThenContinued(iterations: number, deferral: Deferral = RATE_LIMITED): NewEvent[] {
  return [
    { type: "ENGINE_END", run_id: "run-1", status: "DEFERRED", final_iteration: iterations, deferred: { reason: deferral.reason, resume_after: deferral.resumeAfter, message: deferral.message } },
    { type: "ENGINE_START", run_id: "run-1", agent_home: "/agent", work_dir: "/work", config: {}, engine_version: "test" },
  ];
}

describe("a limit the model call waits for", () => {
  it("ends the loop DEFERRED with the deferral, the tool results before it kept", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"one"}']), new DeferredError(RATE_LIMITED)] });
    expect(await run.run()).toEqual({ status: "DEFERRED", deferred: RATE_LIMITED });
    expect(run.of("ACTION_RESULT").map((result) => result.status)).toEqual(["SUCCESS"]);
    expect(run.of("THOUGHT")).toHaveLength(1);
    expect(run.of("ERROR")).toHaveLength(0);
  });

  it("continued, asks the model once, for the next iteration, with the tool result it had; no tool runs again", async () => {
    const first = scriptedRun({ turns: [calls(["echo", '{"text":"one"}']), new DeferredError(RATE_LIMITED)] });
    await first.run();
    const resumed = scriptedRun({ before: [...first.journal.slice(1).map(({ seq: _seq, timestamp: _at, ...event }) => event as NewEvent), ...deferredThenContinued(1)], turns: [text("done")] });
    expect(await resumed.run()).toEqual({ status: "COMPLETED", result: "done" });
    expect(resumed.ran).toEqual([]);
    expect(resumed.requests).toHaveLength(1);
    const messages = resumed.requests[0]!.messages;
    expect(messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["one"]);
    expect(messages.filter((message) => message.role === "user")).toHaveLength(1);
    expect(resumed.of("THOUGHT").map((thought) => thought.iteration)).toEqual([1, 2]);
  });

  it("deferred at the re-ask an output schema asked for, continued, re-asks nothing: one engine message, one model call", async () => {
    const output = await compileOutputSchema({ source: "agent.yaml: output_schema", draft: "2020-12", schema: { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } } });
    const first = scriptedRun({ turns: [text("not json"), new DeferredError(RATE_LIMITED)] });
    first.ports.settings.output = output;
    expect((await first.run()).status).toBe("DEFERRED");
    expect(first.of("USER_MESSAGE").filter((message) => message.source === "engine")).toHaveLength(1);
    const resumed = scriptedRun({ before: [...first.journal.slice(1).map(({ seq: _seq, timestamp: _at, ...event }) => event as NewEvent), ...deferredThenContinued(1)], turns: [text('{"ok":true}')] });
    resumed.ports.settings.output = output;
    expect(await resumed.run()).toEqual({ status: "COMPLETED", result: '{"ok":true}', parsed: { value: { ok: true } } });
    expect(resumed.of("USER_MESSAGE").filter((message) => message.source === "engine")).toHaveLength(1);
    expect(resumed.requests).toHaveLength(1);
  });
});

describe("a budget with no room for the next call", () => {
  const exhausted: Deferral = { reason: "BUDGET_EXHAUSTED", resumeAfter: null, message: "the run's budget of $1 has $0.01 left" };

  it("ends the loop DEFERRED before the call is sent: the model never sees it", async () => {
    let admitted = 0;
    const budget: LoopBudget = {
      admit: async () => {
        admitted += 1;
        if (admitted === 2) throw new DeferredError(exhausted);
        return { settle: () => null };
      },
    };
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"one"}']), text("never asked")], budget });
    expect(await run.run()).toEqual({ status: "DEFERRED", deferred: exhausted });
    expect(run.requests).toHaveLength(1);
    expect(run.ran).toEqual([["echo", "one"]]);
  });

  it("journals what a budget counted for a reply beyond its usage on its THOUGHT, and the run's state sums it", async () => {
    const charge = { usd: 0.02, tokens: 5000 };
    const budget: LoopBudget = { admit: async () => ({ settle: () => charge }) };
    const run = scriptedRun({ turns: [text("done")], budget });
    await run.run();
    expect(run.of("THOUGHT")[0]!.budget_charge).toEqual(charge);
    expect(run.ports.journal.runState().usage.charged).toEqual(charge);
  });

  it("journals what a budget counted for a failed attempt on its LLM_ATTEMPT_FAILED", () => {
    const event = failedAttemptEvent(3, { attempt: 1, startedAt: 0, durationMs: 5, failure: { kind: "transient", reason: "no answer within 5 ms" }, reason: "no answer within 5 ms", retryInMs: 10, charged: { usd: null, tokens: 900 } }, []);
    expect(event).toMatchObject({ type: "LLM_ATTEMPT_FAILED", iteration: 3, budget_charge: { usd: null, tokens: 900 } });
  });
});
