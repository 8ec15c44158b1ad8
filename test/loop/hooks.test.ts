// The loop's hook points, offline: the order they fire in, what each is given, and what a hook's answer does to the run.
import { describe, expect, it } from "vitest";
const HOOK_BLOCKED = "HOOK_BLOCKED";
import { calls, failed, hookOrder, scriptedRun, text } from "./scripted-loop.js";

const ITERATION = ["on_iteration_start", "pre_llm_request", "post_llm_response"];

describe("the hook points, in loop order", () => {
  it("fire around each model call and each tool call, on_error after a failed one, on_iteration_end closing each iteration, the final one too", async () => {
    const run = scriptedRun({
      turns: [calls(["echo", '{"text":"hello"}'], ["echo", '{"text":"fail"}']), text("finished")],
      toolResult: (argv) => (argv[1] === "fail" ? failed(3, "broken") : undefined),
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "finished" });
    expect(hookOrder(run)).toEqual([
      ...ITERATION,
      "pre_tool_execution",
      "post_tool_execution",
      "pre_tool_execution",
      "post_tool_execution",
      "on_error",
      "on_iteration_end",
      ...ITERATION,
      "on_iteration_end",
    ]);
    expect(run.hooked.map((call) => call.iteration)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
  });

  it("give each point what it is about: the iteration, the request, the reply, the call, its result", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"hello"}']), text("finished")] });
    await run.run();
    const [start, pre, post, preTool, postTool] = run.hooked;
    expect(start!.payload).toEqual({ iteration: 1 });
    expect(pre!.payload).toBe(run.requests[0]);
    expect(post!.payload).toMatchObject({ tool_calls: [{ name: "echo", arguments: '{"text":"hello"}' }] });
    expect(preTool).toMatchObject({ payload: { name: "echo", arguments: '{"text":"hello"}' }, env: { TOOL_NAME: "echo" } });
    expect(postTool).toMatchObject({ payload: { type: "ACTION_RESULT", tool_name: "echo", status: "SUCCESS" }, env: { TOOL_NAME: "echo", TOOL_RESULT: "hello" } });
    expect(run.hooked.at(-2)!.payload).toMatchObject({ content: "finished", tool_calls: [] });
  });

  it("give on_error the failed call's observation as ERROR_MESSAGE", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"x"}']), text("ok")], toolResult: () => failed(3, "broken") });
    await run.run();
    const onError = run.hooked.find((call) => call.name === "on_error");
    expect(onError).toMatchObject({ payload: { status: "FAILED" }, env: { TOOL_NAME: "echo", ERROR_MESSAGE: expect.stringContaining("broken") } });
  });
});

describe("what a hook's answer does", () => {
  it("pre_tool_execution's block is the call's ERROR observation; the tool is not run, and the hooks that follow a result still fire", async () => {
    const run = scriptedRun({
      turns: [calls(["echo", '{"text":"rm -rf"}']), text("ok")],
      hooks: { pre_tool_execution: () => ({ kind: "block", reason: "not on my watch" }) },
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "ok" });
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_name: "echo", tool_args: { text: "rm -rf" }, resolved_command: null });
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: "Blocked by pre_tool_execution hook: not on my watch" });
    expect(hookOrder(run).slice(3, 7)).toEqual(["pre_tool_execution", "post_tool_execution", "on_error", "on_iteration_end"]);
    // The model is told in the next request.
    expect(JSON.stringify(run.requests[1]!.messages)).toContain("Blocked by pre_tool_execution hook: not on my watch");
  });

  it("pre_llm_request's block fails the run HOOK_BLOCKED before anything is sent", async () => {
    const run = scriptedRun({ turns: [text("never sent")], hooks: { pre_llm_request: () => ({ kind: "block", reason: "token budget exhausted" }) } });
    expect(await run.run()).toEqual({ status: "FAILED", error: { type: HOOK_BLOCKED, message: "pre_llm_request hook blocked the model request: token budget exhausted" } });
    expect(run.requests).toEqual([]);
    expect(run.of("THOUGHT")).toEqual([]);
  });

  it("pre_llm_request's payload replaces the request's fields it names and keeps the others", async () => {
    const replacement = { model: "replaced-model", messages: [{ role: "user", content: "replaced question" }] };
    const run = scriptedRun({ turns: [text("answer")], hooks: { pre_llm_request: () => ({ kind: "continue", output: { payload: replacement } }) } });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "answer" });
    const sent = run.requests[0]!;
    expect(sent.model).toBe("replaced-model");
    expect(sent.messages).toEqual(replacement.messages);
    expect(sent.tools.map((tool) => tool.function.name)).toEqual(["echo", "ask_human"]);
    expect(run.of("THOUGHT")[0]).toMatchObject({ model: "scripted" });
  });

  it("pre_llm_request's invalid payload fails the run HOOK_BLOCKED, naming the field and the fix, and sends nothing", async () => {
    const run = scriptedRun({ turns: [text("never")], hooks: { pre_llm_request: () => ({ kind: "continue", output: { payload: { messages: "not a list" } } }) } });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type: HOOK_BLOCKED } });
    expect(end.status === "FAILED" && end.error.message).toMatch(/^pre_llm_request hook returned an invalid replacement request: payload\.messages: .*Fix: print \{"payload"/);
    expect(run.requests).toEqual([]);
  });

  it("post_llm_response may annotate a reply (logged) but not forge its tool calls (a warning; the reply is journaled as the model gave it)", async () => {
    const forged = { annotation: { reviewed: true }, tool_calls: [{ id: "forged", name: "echo", arguments: '{"text":"x"}' }] };
    const run = scriptedRun({ turns: [text("final words")], hooks: { post_llm_response: () => ({ kind: "continue", output: forged }) } });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "final words" });
    expect(run.of("THOUGHT")[0]).toMatchObject({ content: "final words", tool_calls: [] });
    expect(run.of("ACTION_REQUEST")).toEqual([]);
    expect(run.ran).toEqual([]);
    expect(run.progress.find((line) => line.startsWith("[warning]"))).toContain("tries to change the reply (tool_calls)");
    expect(run.logged).toContain('post_llm_response annotation: {"reviewed":true}');
  });

  it("post_tool_execution, on_error and on_iteration_start answering block change nothing: the run goes on", async () => {
    const block = () => ({ kind: "block" as const, reason: "no" });
    const run = scriptedRun({
      turns: [calls(["echo", '{"text":"x"}']), text("done")],
      toolResult: () => failed(1, "bad"),
      hooks: { post_tool_execution: block, on_error: block, on_iteration_start: block, on_iteration_end: block, post_llm_response: block },
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "done" });
    expect(run.ran).toEqual([["echo", "x"]]);
  });
});
