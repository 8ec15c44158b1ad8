// Replies the model did not finish, offline: cut off, refused or paused, each ends the run FAILED with its own type and how to go on, and a continue asks again without the unfinished text.
import { describe, expect, it } from "vitest";
import { MODEL_PAUSED, MODEL_REFUSED, MODEL_TRUNCATED } from "../../src/errors.js";
import { scriptedRun, text } from "./scripted-loop.js";

describe("a reply the model did not finish", () => {
  it.each([
    ["length", MODEL_TRUNCATED, /cut off at its token limit \(finish_reason: length\).*set llm\.max_tokens in agent\.yaml higher than the server's default, then continue the run/],
    ["max_tokens", MODEL_TRUNCATED, /finish_reason: max_tokens/],
    ["content_filter", MODEL_REFUSED, /The provider stopped the model's reply \(finish_reason: content_filter\).*rephrase the task with delta continue --run-id run-1 .*'<rephrased task>'/],
    ["refusal", MODEL_REFUSED, /finish_reason: refusal/],
    ["pause_turn", MODEL_PAUSED, /paused its turn half-way \(finish_reason: pause_turn.*continue the run to ask the model again/],
  ])("finish_reason %s ends the run FAILED with %s, the reply journaled as it came", async (reason, type, message) => {
    const run = scriptedRun({ turns: [text("half an ans", reason)] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type } });
    expect(end.status === "FAILED" && end.error.message).toMatch(message);
    expect(run.of("THOUGHT")[0]).toMatchObject({ content: "half an ans", finish_reason: reason, tool_calls: [] });
  });

  it("a cut-off reply names the max_tokens the agent set", async () => {
    const run = scriptedRun({ llm: { max_tokens: 256 }, turns: [text("half", "length")] });
    const end = await run.run();
    expect(end.status === "FAILED" && end.error.message).toContain("raise llm.max_tokens in agent.yaml (now 256)");
  });

  it("a continue asks again without the unfinished text, and completes on a finished reply", async () => {
    const run = scriptedRun({ turns: [text("I cannot hel", "length"), text("All done.")] });
    await run.run();
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "All done." });
    expect(run.requests[1]!.messages.map((message) => message.role)).toEqual(["user"]);
    expect(JSON.stringify(run.requests[1]!.messages)).not.toContain("I cannot hel");
  });
});
