// A hook about a tool call is told the call's DELTA_ACTION_ID and DELTA_IDEMPOTENCY_KEY; any other hook is told none, not even one inherited from a run that started this one.
import { describe, expect, it } from "vitest";
import { buildHookEnv } from "../../src/hooks/hook-env.js";

const facts = { agentHome: "/agents/a", cwd: "/ws/W001", runId: "r1", runDir: "/ws/W001/.delta/r1", journalPath: "/ws/W001/.delta/r1/journal.jsonl", iteration: 3 };
// A `delta run` started by another run's tool inherits that call's variables.
const inherited = { PATH: "/bin", DELTA_ACTION_ID: "parent_call", DELTA_IDEMPOTENCY_KEY: "parent:2:parent_call" };

describe("a hook's call identity", () => {
  it("is the call's for a hook about it", () => {
    const env = buildHookEnv({ ...facts, toolName: "charge", actionId: "call_1", idempotencyKey: "r1:3:call_1" }, inherited);
    expect([env.DELTA_ACTION_ID, env.DELTA_IDEMPOTENCY_KEY]).toEqual(["call_1", "r1:3:call_1"]);
  });

  it("is absent for a hook about no call, whatever the parent's environment held", () => {
    const env = buildHookEnv(facts, inherited);
    expect(env).not.toHaveProperty("DELTA_ACTION_ID");
    expect(env).not.toHaveProperty("DELTA_IDEMPOTENCY_KEY");
    expect(env.PATH).toBe("/bin");
  });
});
