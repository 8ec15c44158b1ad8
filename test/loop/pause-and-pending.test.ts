// Where a run stops and how it picks up, offline: ask_human's pause, the calls a stop left pending, and an interrupt.
import { describe, expect, it } from "vitest";
import { recordAnswer } from "../../src/loop/ask-human.js";
import { calls, scriptedRun, text, thoughtEvent, type ScriptedRun } from "./scripted-loop.js";

/** What `continue -m ANSWER` records for the open question before the loop runs again. */
function answer(run: ScriptedRun, response: string): void {
  const [question] = run.of("HUMAN_INPUT_REQUEST").slice(-1);
  recordAnswer(run.ports.journal, { iteration: question!.iteration, action_id: question!.action_id, request_id: question!.request_id }, response, Date.now());
}

describe("ask_human", () => {
  it("pauses WAITING_FOR_INPUT with the question journaled and published; a password is sensitive", async () => {
    const run = scriptedRun({ turns: [calls(["ask_human", '{"prompt":"Token?","input_type":"password"}'])] });
    expect(await run.run()).toMatchObject({ status: "WAITING_FOR_INPUT", request: { prompt: "Token?", input_type: "password", sensitive: true, run_id: "run-1" } });
    expect(run.published).toHaveLength(1);
    expect(run.of("HUMAN_INPUT_REQUEST")[0]).toMatchObject({ prompt: "Token?", sensitive: true, request_id: run.published[0]!.request_id });
    expect(run.of("ACTION_REQUEST")[0]).toMatchObject({ tool_name: "ask_human", resolved_command: null });
    expect(run.of("ACTION_RESULT")).toEqual([]);
  });

  it("stops at the question: the calls after it in the same reply wait, and run once it is answered, before the next model call", async () => {
    const run = scriptedRun({ turns: [calls(["ask_human", '{"prompt":"Which branch?"}'], ["echo", '{"text":"after"}']), text("merged")] });
    expect(await run.run()).toMatchObject({ status: "WAITING_FOR_INPUT" });
    expect(run.ran).toEqual([]);
    answer(run, "main");
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "merged" });
    expect(run.ran).toEqual([["echo", "after"]]);
    expect(run.requests[1]!.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["main", "after"]);
  });

  it("with -i asks on the terminal and goes on with the answer, publishing nothing", async () => {
    const asked: string[] = [];
    const run = scriptedRun({
      turns: [calls(["ask_human", '{"prompt":"Proceed?","input_type":"confirmation"}']), text("proceeding")],
      askInteractively: async (question) => {
        asked.push(question.prompt);
        return "yes";
      },
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "proceeding" });
    expect(asked).toEqual(["Proceed?"]);
    expect(run.published).toEqual([]);
    expect(run.of("HUMAN_INPUT_RECEIVED")[0]).toMatchObject({ response: "yes" });
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ tool_name: "ask_human", status: "SUCCESS", observation_content: "yes" });
  });

  it("refuses a question without a prompt, saying what it takes; the run goes on", async () => {
    const run = scriptedRun({ turns: [calls(["ask_human", '{"question":"x"}']), text("ok")] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "ok" });
    expect(run.published).toEqual([]);
    expect(run.of("ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/^ask_human needs \{"prompt": string/) });
  });
});

describe("calls a stop left pending", () => {
  it("a requested call with no result gets an ERROR result and is never run again; one never requested runs", async () => {
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
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "done" });
    const results = run.of("ACTION_RESULT");
    expect(results.map((result) => [result.action_id, result.status])).toEqual([
      ["requested", "ERROR"],
      ["never", "SUCCESS"],
    ]);
    expect(results[0]!.observation_content).toBe("The engine stopped before this action finished; it may or may not have taken effect.");
    expect(run.ran).toEqual([["echo", "second"]]);
  });

  it("an answer recorded before the engine stopped becomes the question's result, and nothing is asked again", async () => {
    const run = scriptedRun({
      before: [
        thoughtEvent(1, [{ id: "q", name: "ask_human", arguments: '{"prompt":"Which color?"}' }]),
        { type: "ACTION_REQUEST", iteration: 1, action_id: "q", tool_name: "ask_human", tool_args: { prompt: "Which color?" }, resolved_command: null },
        { type: "HUMAN_INPUT_REQUEST", iteration: 1, action_id: "q", request_id: "r1", prompt: "Which color?", input_type: "text", sensitive: false },
        { type: "HUMAN_INPUT_RECEIVED", iteration: 1, action_id: "q", request_id: "r1", response: "green" },
      ],
      turns: [text("you chose green")],
    });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "you chose green" });
    expect(run.of("ACTION_RESULT")).toEqual([expect.objectContaining({ action_id: "q", status: "SUCCESS", observation_content: "green" })]);
    expect(run.published).toEqual([]);
    expect(run.requests[0]!.messages.find((message) => message.role === "tool")).toMatchObject({ content: "green" });
  });

  it("a question never asked before the stop is asked now", async () => {
    const run = scriptedRun({ before: [thoughtEvent(1, [{ id: "q", name: "ask_human", arguments: '{"prompt":"Ready?"}' }])], turns: [] });
    expect(await run.run()).toMatchObject({ status: "WAITING_FOR_INPUT", request: { prompt: "Ready?", action_id: "q" } });
    expect(run.requests).toEqual([]);
  });
});

describe("an interrupt", () => {
  it("during the model call: the reply is journaled, its tools are not run, the run is INTERRUPTED", async () => {
    const run: ScriptedRun = scriptedRun({
      turns: [
        () => {
          run.interrupt();
          return calls(["echo", '{"text":"x"}']);
        },
      ],
    });
    expect(await run.run()).toMatchObject({ status: "INTERRUPTED", error: { type: "INTERRUPTED" } });
    expect(run.of("THOUGHT")).toHaveLength(1);
    expect(run.ran).toEqual([]);
  });

  it("during a tool: its result is kept, the calls after it are left pending for a continue", async () => {
    const run: ScriptedRun = scriptedRun({
      turns: [calls(["echo", '{"text":"one"}'], ["echo", '{"text":"two"}'])],
      toolResult: () => {
        run.interrupt();
        return undefined;
      },
    });
    expect(await run.run()).toMatchObject({ status: "INTERRUPTED" });
    expect(run.ran).toEqual([["echo", "one"]]);
    expect(run.of("ACTION_RESULT").map((result) => result.action_id)).toEqual(["call_echo_0"]);
    expect(run.ports.journal.runState().pending.map((pending) => pending.call.id)).toEqual(["call_echo_1"]);
  });
});
