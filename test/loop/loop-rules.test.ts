// The loop's rules, one test each, driven in-process through its ports: a scripted model, an in-memory journal, and no process or socket (both made to throw).
import { describe, expect, it, vi } from "vitest";
import { ContextOverflowError, MAX_ITERATIONS, MODEL_REFUSED, MODEL_TRUNCATED } from "../../src/errors.js";
import { calls, scriptedRun, text, thoughtEvent } from "./scripted-loop.js";

// The loop itself starts nothing and connects nowhere: every process and socket is the ports'.
vi.mock("node:child_process", async (original) => {
  const actual = await original<typeof import("node:child_process")>();
  const refuse = (): never => {
    throw new Error("the loop spawned a process");
  };
  return { ...actual, default: { ...actual, spawn: refuse }, spawn: refuse };
});
vi.mock("node:net", async (original) => {
  const actual = await original<typeof import("node:net")>();
  const refuse = (): never => {
    throw new Error("the loop opened a socket");
  };
  return { ...actual, default: { ...actual, connect: refuse, createConnection: refuse }, connect: refuse, createConnection: refuse };
});

describe("the loop", () => {
  it("proves its set-up: a spawn or a connect from here throws", async () => {
    const { spawn } = await import("node:child_process");
    const { connect } = await import("node:net");
    expect(() => spawn("true")).toThrow(/spawned a process/);
    expect(() => connect(80, "127.0.0.1")).toThrow(/opened a socket/);
  });

  it("synthesizes an ERROR result for a requested call with no result, never re-running it, and runs a call never requested", async () => {
    const run = scriptedRun({
      before: [
        thoughtEvent(1, [
          { id: "requested", name: "echo", arguments: '{"text":"first"}' },
          { id: "never", name: "echo", arguments: '{"text":"second"}' },
        ]),
        { type: "ACTION_REQUEST", iteration: 1, action_id: "requested", tool_name: "echo", tool_args: { text: "first" }, resolved_command: ["echo", "first"] },
      ],
      turns: [text("done")],
    });
    const end = await run.run();
    expect(end).toEqual({ status: "COMPLETED", result: "done" });
    const results = run.of("ACTION_RESULT");
    expect(results.map((result) => [result.action_id, result.status])).toEqual([
      ["requested", "ERROR"],
      ["never", "SUCCESS"],
    ]);
    expect(results[0]!.observation_content).toMatch(/may or may not have taken effect/);
    expect(run.ran).toEqual([["echo", "second"]]);
  });

  it("ends FAILED with MODEL_REFUSED when the provider's filter stops the reply", async () => {
    const run = scriptedRun({ turns: [text("I cannot", "content_filter")] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type: MODEL_REFUSED } });
    expect(end.status === "FAILED" && end.error.message).toContain("delta continue --run-id run-1");
  });

  it("ends FAILED with MODEL_TRUNCATED when the reply was cut off at its token limit", async () => {
    const run = scriptedRun({ turns: [text("half an ans", "length")] });
    expect(await run.run()).toMatchObject({ status: "FAILED", error: { type: MODEL_TRUNCATED } });
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

  it("pauses WAITING_FOR_INPUT on ask_human, the question journaled and published", async () => {
    const run = scriptedRun({ turns: [calls(["ask_human", '{"prompt":"Which branch?"}'])] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "WAITING_FOR_INPUT", request: { prompt: "Which branch?", run_id: "run-1", action_id: "call_ask_human_0" } });
    expect(run.published.map((request) => request.prompt)).toEqual(["Which branch?"]);
    expect(run.of("HUMAN_INPUT_REQUEST").map((event) => event.prompt)).toEqual(["Which branch?"]);
    expect(run.of("ACTION_RESULT")).toEqual([]);
  });

  it("ends FAILED with MAX_ITERATIONS when the model is still calling tools at the limit", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"a"}']), calls(["echo", '{"text":"b"}']), text("too late")] });
    const end = await run.run(2);
    expect(end).toMatchObject({ status: "FAILED", error: { type: MAX_ITERATIONS } });
    expect(run.requests).toHaveLength(2);
  });

  it("tells the model a pre_tool_execution block, and does not run the tool", async () => {
    const run = scriptedRun({
      turns: [calls(["echo", '{"text":"rm -rf"}']), text("ok")],
      hooks: { pre_tool_execution: () => ({ kind: "block", reason: "not on my watch" }) },
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "ok" });
    expect(run.ran).toEqual([]);
    const [result] = run.of("ACTION_RESULT");
    expect(result).toMatchObject({ status: "ERROR", observation_content: "Blocked by pre_tool_execution hook: not on my watch" });
  });

  it("answers an unknown tool with an ERROR observation naming the tools there are", async () => {
    const run = scriptedRun({ turns: [calls(["rm", "{}"]), text("ok")] });
    await run.run();
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: "Unknown tool 'rm'. Available tools: echo, ask_human." });
  });

  it("answers invalid arguments with an ERROR observation, the tool not run", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text": '], ["echo", '{"wrong": 1}']), text("ok")] });
    await run.run();
    expect(run.ran).toEqual([]);
    const [notJson, unbindable] = run.of("ACTION_RESULT");
    expect(notJson).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/^The arguments for 'echo' are not valid JSON/) });
    expect(unbindable).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/text/) });
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
