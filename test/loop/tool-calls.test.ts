// The model's tool calls, offline: what runs, what cannot run and why the model is told, and the observation's bound.
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES, MAX_ARGUMENT_DEPTH } from "../../src/tools/argument-limits.js";
import { calls, scriptedRun, succeeded, text } from "./scripted-loop.js";

describe("calls that run", () => {
  it("run in the model's order, each requested (flushed) before it runs, every result in the next request", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"one"}'], ["echo", '{"text":"two"}']), text("done")] });
    await run.run();
    expect(run.ran).toEqual([["echo", "one"], ["echo", "two"]]);
    expect(run.journal.map((event) => event.type).slice(1, 6)).toEqual(["THOUGHT", "ACTION_REQUEST", "ACTION_RESULT", "ACTION_REQUEST", "ACTION_RESULT"]);
    expect(run.of("ACTION_REQUEST").map((event) => event.resolved_command)).toEqual([["echo", "one"], ["echo", "two"]]);
    expect(run.requests[1]!.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["one", "two"]);
  });

  it("empty arguments are an empty object", async () => {
    const run = scriptedRun({ turns: [calls(["echo", ""]), text("ok")] });
    await run.run();
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_args: {} });
  });
});

describe("calls that cannot run: an ERROR observation the model sees, the tool never started", () => {
  it("an unknown tool, naming the tools there are", async () => {
    const run = scriptedRun({ turns: [calls(["rm", "{}"]), text("ok")] });
    await run.run();
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: "Unknown tool 'rm'. Available tools: echo, ask_human." });
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_name: "rm", resolved_command: null });
  });

  it("arguments that are not JSON, or do not bind to the tool's parameters", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text": '], ["echo", '{"wrong": 1}'], ["echo", "{}"]), text("ok")] });
    await run.run();
    expect(run.ran).toEqual([]);
    const [notJson, unbindable, missing] = run.of("ACTION_RESULT");
    expect(notJson).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/^The arguments for 'echo' are not valid JSON \(.*\)\. Send one JSON object\.$/) });
    expect(unbindable).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/text/) });
    expect(missing).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/text/) });
    expect(run.requests[1]!.messages.filter((message) => message.role === "tool")).toHaveLength(3);
  });

  it.each([
    // Walking 20,000 nested arrays recursively would overflow the stack.
    ["nested arrays", `{"text": ${"[".repeat(20_000)}${"]".repeat(20_000)}}`, `nested 20001 levels deep; at most ${MAX_ARGUMENT_DEPTH}`],
    ["nested objects", `{"text": ${'{"a":'.repeat(4_100)}1${"}".repeat(4_100)}}`, `nested 4101 levels deep; at most ${MAX_ARGUMENT_DEPTH}`],
    ["oversized", JSON.stringify({ text: "x".repeat(MAX_ARGUMENT_BYTES) }), `at most ${MAX_ARGUMENT_BYTES} bytes`],
  ])("arguments over the limits (%s), journaled with no arguments", async (_name, args, observation) => {
    const run = scriptedRun({ turns: [calls(["echo", args]), text("saw it")] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "saw it" });
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining(observation) });
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_args: null, resolved_command: null });
  });

  it("a tool whose box cannot be made, saying why and where to fix it", async () => {
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"x"}']), text("ok")], boxFails: "no user namespaces" });
    await run.run();
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: "[sandbox] the box of tool 'echo' could not be made (no user namespaces); fix its sandbox: in agent.yaml" });
  });
});

describe("an observation over its token bound", () => {
  it("is cut to a quarter of the window's room, head and tail kept; the result says how many lines the tool printed", async () => {
    const lines = Array.from({ length: 2_000 }, (_, n) => `line ${n} of the tool's long output`);
    const output = lines.join("\n");
    const run = scriptedRun({ contextWindow: 8_000, turns: [calls(["echo", '{"text":"x"}']), text("done")], toolResult: () => ({ ...succeeded(output), stdout: `${output}\n` }) });
    await run.run();
    const [result] = run.of("ACTION_RESULT");
    expect(result!.observation_content.startsWith(lines.slice(0, 5).join("\n"))).toBe(true);
    expect(result!.observation_content.endsWith(lines.slice(-5).join("\n"))).toBe(true);
    expect(result!.observation_content).toMatch(/omitted/);
    expect(result!.observation_content.length).toBeLessThan(output.length / 4);
    expect(result).toMatchObject({ output_lines: 2_000 });
    // The window of 8,000 keeps 2,000 for the reply (a quarter, under 4,096): a quarter of the other 6,000.
    expect(run.logged).toContain("tool echo: output cut to 1500 tokens for the context; the whole output is in io/tool_executions/");
  });

  it("is kept whole within the bound, with no line count", async () => {
    const run = scriptedRun({ contextWindow: 8_000, turns: [calls(["echo", '{"text":"short"}']), text("done")] });
    await run.run();
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ observation_content: "short" });
    expect(run.of("ACTION_RESULT")[0]).not.toHaveProperty("output_lines");
  });
});
