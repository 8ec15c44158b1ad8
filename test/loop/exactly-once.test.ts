// An answer is never asked for twice, offline: a final answer journaled before the engine stopped ends the run on a continue with no model call; a reply the model did not finish runs none of its tool calls.
import { describe, expect, it } from "vitest";
import { compileOutputSchema } from "../../src/agent/output-schema.js";
import { MODEL_REFUSED, MODEL_TRUNCATED, OUTPUT_INVALID } from "../../src/errors.js";
import type { HookName } from "../../src/hooks/schema.js";
import type { NewEvent } from "../../src/journal/events.js";
import { calls, scriptedRun, text, type ScriptedRun } from "./scripted-loop.js";

const output = await compileOutputSchema({
  source: "agent.yaml: output_schema",
  draft: "2020-12",
  schema: { type: "object", required: ["ok"], properties: { ok: { type: "boolean" } } },
});

/** A THOUGHT whose reply has no tool calls: the model's final answer. */
function answer(iteration: number, content: string, finishReason = "stop"): NewEvent {
  return { type: "THOUGHT", iteration, content, tool_calls: [], usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: finishReason };
}

/** What the janitor journals when it takes over the run of an engine that died, and the ENGINE_START of the process that continues it. */
const JANITOR_AND_RESTART: NewEvent[] = [
  { type: "ERROR", error_type: "ORPHANED_RUN", error_message: "[Janitor] The engine process stopped without recording an end; run marked INTERRUPTED." },
  { type: "ENGINE_END", run_id: "run-1", status: "INTERRUPTED", final_iteration: 1 },
  { type: "ENGINE_START", run_id: "run-1", agent_home: "/agent", work_dir: "/work", config: {}, engine_version: "test" },
];

/** Every hook point the loop reaches, in order. */
function recordHooks(run: ScriptedRun): HookName[] {
  const reached: HookName[] = [];
  const hook = run.ports.hook;
  run.ports.hook = (name, iteration, payload, env) => {
    reached.push(name);
    return hook(name, iteration, payload, env);
  };
  return reached;
}

describe("a final answer journaled before the engine stopped", () => {
  it("ends the run COMPLETED with that answer, and the model is not asked again", async () => {
    const run = scriptedRun({ before: [answer(1, "the report is done"), ...JANITOR_AND_RESTART], turns: [text("a second answer")] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "the report is done" });
    expect(run.requests).toHaveLength(0);
    expect(run.of("THOUGHT")).toHaveLength(1);
  });

  it("ends it so with no janitor's end between (the journal just stops after the answer) and after a signal's INTERRUPTED end", async () => {
    for (const after of [[], [{ type: "ENGINE_END", run_id: "run-1", status: "INTERRUPTED", final_iteration: 1 } as NewEvent]]) {
      const run = scriptedRun({ before: [answer(1, "done"), ...after], turns: [] });
      expect(await run.run()).toEqual({ status: "COMPLETED", result: "done" });
      expect(run.requests).toHaveLength(0);
    }
  });

  it("runs on_iteration_end once: again when its outcome was not journaled, not when it was", async () => {
    const unrecorded = scriptedRun({ before: [answer(1, "done"), ...JANITOR_AND_RESTART], turns: [] });
    const reached = recordHooks(unrecorded);
    await unrecorded.run();
    expect(reached).toEqual(["on_iteration_end"]);

    const ran: NewEvent = { type: "HOOK_RESULT", hook: "on_iteration_end", iteration: 1, outcome: "continue", exit_code: 0, timed_out: false, started_at: "2026-01-01T00:00:00.000Z", duration_ms: 3, record: "io/hooks/on_iteration_end_1.json" };
    const recorded = scriptedRun({ before: [answer(1, "done"), ran, ...JANITOR_AND_RESTART], turns: [] });
    const reachedAgain = recordHooks(recorded);
    expect(await recorded.run()).toEqual({ status: "COMPLETED", result: "done" });
    expect(reachedAgain).toEqual([]);
  });

  it("is held to the output schema as it would have been: a matching answer gives its value, with no model call", async () => {
    const run = scriptedRun({ before: [answer(1, '{"ok": true}'), ...JANITOR_AND_RESTART], turns: [] });
    run.ports.settings.output = output;
    expect(await run.run()).toEqual({ status: "COMPLETED", result: '{"ok": true}', parsed: { value: { ok: true } } });
    expect(run.requests).toHaveLength(0);
  });

  it("an answer that does not match gets the re-ask it would have got, and the model answers that", async () => {
    const run = scriptedRun({ before: [answer(1, "yes it is ok"), ...JANITOR_AND_RESTART], turns: [text('{"ok": true}')] });
    run.ports.settings.output = output;
    expect(await run.run()).toMatchObject({ status: "COMPLETED", parsed: { value: { ok: true } } });
    expect(run.requests).toHaveLength(1);
    expect(run.of("USER_MESSAGE").filter((message) => message.source === "engine")).toHaveLength(1);
  });

  it("an answer to the re-ask that still does not match ends FAILED OUTPUT_INVALID, as it would have, with no model call", async () => {
    const reask: NewEvent = { type: "USER_MESSAGE", source: "engine", content: "Your final answer does not match" };
    const run = scriptedRun({ before: [answer(1, "nope"), reask, answer(2, "still nope"), ...JANITOR_AND_RESTART], turns: [text('{"ok": true}')] });
    run.ports.settings.output = output;
    expect(await run.run()).toMatchObject({ status: "FAILED", error: { type: OUTPUT_INVALID } });
    expect(run.requests).toHaveLength(0);
  });

  it("an answer the run ended on is not finished again: a message after it, or a COMPLETED end, sends the model the conversation", async () => {
    const more = scriptedRun({ before: [answer(1, "done"), ...JANITOR_AND_RESTART, { type: "USER_MESSAGE", content: "now the summary" }], turns: [text("the summary")] });
    expect(await more.run()).toEqual({ status: "COMPLETED", result: "the summary" });
    expect(more.requests).toHaveLength(1);

    const completed = scriptedRun({ before: [answer(1, "done"), { type: "ENGINE_END", run_id: "run-1", status: "COMPLETED", final_iteration: 1 }, { type: "USER_MESSAGE", content: "again" }], turns: [text("again done")] });
    expect(await completed.run()).toEqual({ status: "COMPLETED", result: "again done" });
  });

  it("an answer the model did not finish is no answer: the continue asks again", async () => {
    const run = scriptedRun({ before: [answer(1, "half an ans", "length"), ...JANITOR_AND_RESTART], turns: [text("the whole answer")] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "the whole answer" });
    expect(run.requests).toHaveLength(1);
  });
});

describe("a reply the model did not finish, with tool calls", () => {
  it.each([
    ["length", MODEL_TRUNCATED],
    ["max_tokens", MODEL_TRUNCATED],
    ["content_filter", MODEL_REFUSED],
  ])("finish_reason %s runs none of them and ends FAILED %s, saying so", async (reason, type) => {
    const run = scriptedRun({ turns: [{ ...calls(["echo", '{"text":"a"}'], ["echo", '{"text":"b"}']), finish_reason: reason }, text("never asked")] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type } });
    expect(end.status === "FAILED" && end.error.message).toContain("none of its 2 tool calls ran");
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_REQUEST")).toEqual([]);
    expect(run.requests).toHaveLength(1);
  });

  it("a continue runs none of them either, and asks the model again without the cut-off reply", async () => {
    const run = scriptedRun({ turns: [{ ...calls(["echo", '{"text":"cut'] ), finish_reason: "length" }, text("done")] });
    await run.run();
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "done" });
    expect(run.ran).toEqual([]);
    expect(run.of("ACTION_RESULT")).toEqual([]);
    expect(run.requests[1]!.messages.map((message) => message.role)).toEqual(["user"]);
  });
});
