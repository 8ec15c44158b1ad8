// The loop's limits, offline: the set-up that keeps it offline, the context overflow it recovers from once, --max-iterations, and one journal read an iteration. The other rules have a file each beside this one.
import { describe, expect, it } from "vitest";
import { ContextOverflowError, MAX_ITERATIONS } from "../../src/errors.js";
import { calls, scriptedRun, text, thoughtEvent } from "./scripted-loop.js";

describe("the loop", () => {
  it("proves its set-up: a spawn or a connect from here throws", async () => {
    const { spawn } = await import("node:child_process");
    const { connect } = await import("node:net");
    expect(() => spawn("true")).toThrow(/spawned a process/);
    expect(() => connect(80, "127.0.0.1")).toThrow(/opened a socket/);
  });

  it("retries a context overflow once on a smaller window, journaled as CONTEXT_WINDOW", async () => {
    const run = scriptedRun({ before: earlierIterations(4), turns: [new ContextOverflowError("prompt is too long"), text("done")] });
    const end = await run.run();
    expect(end).toEqual({ status: "COMPLETED", result: "done" });
    expect(run.requests).toHaveLength(2);
    expect(run.requests[1]!.messages.length).toBeLessThan(run.requests[0]!.messages.length);
    expect(run.of("CONTEXT_WINDOW")).toHaveLength(1);
  });

  it("ends FAILED with CONTEXT_OVERFLOW when the smaller window overflows too", async () => {
    const run = scriptedRun({ before: earlierIterations(4), turns: [new ContextOverflowError("prompt is too long"), new ContextOverflowError("still too long"), text("never sent")] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type: "CONTEXT_OVERFLOW" } });
    expect(run.requests).toHaveLength(2);
  });

  it("a smaller window journaled for an overflow holds for the continue: the iterations it dropped are never sent again", async () => {
    const run = scriptedRun({ before: earlierIterations(4), turns: [new ContextOverflowError("prompt is too long"), new ContextOverflowError("still too long"), text("done")] });
    const end = await run.run();
    expect(end.status === "FAILED" && end.error.message).toBe("still too long");
    const [move] = run.of("CONTEXT_WINDOW");
    expect(move).toMatchObject({ reason: "overflow", iteration: 5 });
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "done" });
    const shown = (request: (typeof run.requests)[number]) => request.messages.filter((message) => message.role === "tool").length;
    expect(shown(run.requests[2]!)).toBe(shown(run.requests[1]!));
    expect(shown(run.requests[2]!)).toBeLessThan(shown(run.requests[0]!));
  });

  it("ends FAILED with MAX_ITERATIONS when the model is still calling tools at the limit", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"a"}']), calls(["echo", '{"text":"b"}']), text("too late")] });
    const end = await run.run(2);
    expect(end).toMatchObject({ status: "FAILED", error: { type: MAX_ITERATIONS } });
    expect(run.requests).toHaveLength(2);
  });
});

/** `count` finished iterations of echo calls with long results, so that a window can leave some out. */
function earlierIterations(count: number) {
  return Array.from({ length: count }, (_, index) => {
    const iteration = index + 1;
    const id = `earlier_${iteration}`;
    return [
      thoughtEvent(iteration, [{ id, name: "echo", arguments: '{"text":"x"}' }]),
      { type: "ACTION_REQUEST" as const, iteration, action_id: id, tool_name: "echo", tool_args: { text: "x" }, resolved_command: ["echo", "x"] },
      { type: "ACTION_RESULT" as const, iteration, action_id: id, tool_name: "echo", status: "SUCCESS" as const, observation_content: "word ".repeat(2000), exit_code: 0, duration_ms: 1 },
    ];
  }).flat();
}

describe("journal reads", () => {
  /** How often a run of `turns` reads the journal (its shown events or its state): the loop's port calls, counted. */
  async function journalReads(turns: Parameters<typeof scriptedRun>[0]["turns"]): Promise<number> {
    const run = scriptedRun({ turns });
    const { read, runState } = run.ports.journal;
    let reads = 0;
    run.ports.journal.read = () => ((reads += 1), read());
    run.ports.journal.runState = () => ((reads += 1), runState());
    expect((await run.run()).status).toBe("COMPLETED");
    return reads;
  }

  it("reads the journal once an iteration: the iteration is numbered from the read its context is built from", async () => {
    const one = await journalReads([text("done")]);
    const four = await journalReads([calls(["echo", '{"text":"1"}']), calls(["echo", '{"text":"2"}']), calls(["echo", '{"text":"3"}']), text("done")]);
    expect(four - one).toBe(3);
  });
});
