// A final answer held to the run's output schema, offline: parsed when it matches, re-asked once when it does not, then OUTPUT_INVALID; a continue re-asks about the answer left.
import { describe, expect, it } from "vitest";
import { compileOutputSchema } from "../../src/agent/output-schema.js";
import { OUTPUT_INVALID } from "../../src/errors.js";
import { calls, scriptedRun, text } from "./scripted-loop.js";

const output = {
  ...(await compileOutputSchema({
    source: "agent.yaml: output_schema",
    draft: "2020-12",
    schema: { type: "object", additionalProperties: false, required: ["verdict"], properties: { verdict: { enum: ["pass", "fail"] } } },
  })),
  format: { name: "final_answer", schema: { type: "object" }, strict: true },
};
const VALID = '{"verdict": "pass"}';

/** The engine's own messages: its re-asks. */
const reasks = (run: ReturnType<typeof scriptedRun>) => run.of("USER_MESSAGE").filter((event) => event.source === "engine");

describe("a final answer against the output schema", () => {
  it("a matching answer completes the run with its parsed value; every request asks for the native format", async () => {
    const run = scriptedRun({ output, turns: [calls(["echo", '{"text":"looking"}']), text(VALID)] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: VALID, parsed: { value: { verdict: "pass" } } });
    expect(run.requests.map((request) => request.output_format)).toEqual([output.format, output.format]);
    expect(reasks(run)).toEqual([]);
  });

  it("only a reply without tool calls is held to the schema", async () => {
    const run = scriptedRun({ output, turns: [{ ...calls(["echo", '{"text":"x"}']), content: "not json at all" }, text(VALID)] });
    expect(await run.run()).toMatchObject({ status: "COMPLETED" });
    expect(run.of("ACTION_RESULT")).toHaveLength(1);
    expect(reasks(run)).toEqual([]);
  });

  it("an answer that does not match is re-asked once, the problems and the schema in the engine's message, the last the model sees", async () => {
    const run = scriptedRun({ output, turns: [text('{"verdict": "maybe"}'), text(VALID)] });
    expect(await run.run()).toMatchObject({ status: "COMPLETED", parsed: { value: { verdict: "pass" } } });
    const [reask] = reasks(run);
    expect(reask!.content).toContain('/verdict: must be equal to one of the allowed values ("pass", "fail")');
    expect(reask!.content).toContain('"additionalProperties":false');
    expect(run.requests[1]!.messages.at(-1)).toEqual({ role: "user", content: reask!.content });
    expect(run.progress.some((line) => line.includes("does not match the output schema"))).toBe(true);
  });

  it("an answer to the re-ask that still does not match fails the run OUTPUT_INVALID, naming the problem and how to go on", async () => {
    const run = scriptedRun({ output, turns: [text("Here you go: " + VALID), text('{"verdict": "pass", "line": 3}'), text("never asked")] });
    const end = await run.run();
    expect(end).toMatchObject({ status: "FAILED", error: { type: OUTPUT_INVALID } });
    expect(end.status === "FAILED" && end.error.message).toMatch(/still does not match the output schema \(agent\.yaml: output_schema\) after the engine asked again: \(the answer\): must NOT have additional properties \('line'\)\. Continue the run/);
    expect(run.requests).toHaveLength(2);
    expect(reasks(run)).toHaveLength(1);
  });

  it("a continue without a message re-asks once more about the answer left, before the next model call", async () => {
    const run = scriptedRun({ output, turns: [text("nope"), text("still nope"), text(VALID)] });
    expect(await run.run()).toMatchObject({ status: "FAILED", error: { type: OUTPUT_INVALID } });
    expect(await run.continueRun()).toMatchObject({ status: "COMPLETED", parsed: { value: { verdict: "pass" } } });
    expect(reasks(run)).toHaveLength(2);
    expect(run.requests[2]!.messages.at(-1)).toMatchObject({ role: "user", content: expect.stringContaining("the answer is not JSON") });
  });

  it("a continue with the user's message asks nothing of its own: the answer to that message gets its own re-ask", async () => {
    const run = scriptedRun({ output, turns: [text("nope"), text("still nope"), text("wrong again"), text(VALID)] });
    await run.run();
    expect(await run.continueRun("answer with the verdict only")).toMatchObject({ status: "COMPLETED" });
    expect(run.requests[2]!.messages.at(-1)).toEqual({ role: "user", content: "answer with the verdict only" });
    expect(reasks(run)).toHaveLength(2);
  });

  it("a run without a schema completes on any text and asks for no format", async () => {
    const run = scriptedRun({ turns: [text("Here you go: whatever")] });
    expect(await run.run()).toEqual({ status: "COMPLETED", result: "Here you go: whatever" });
    expect(run.requests[0]!.output_format).toBeUndefined();
  });
});
