// A final answer against the output schema: the one ```json fence the engine removes, what else is invalid, the re-ask, and which answer a continue re-asks about.
import { describe, expect, it } from "vitest";
import { compileOutputSchema } from "../../src/agent/output-schema.js";
import type { JournalEvent } from "../../src/journal/events.js";
import { answersReask, checkFinalAnswer, reaskMessage, unansweredFinalAnswer } from "../../src/loop/final-answer.js";

const output = await compileOutputSchema({
  source: "agent.yaml: output_schema",
  draft: "2020-12",
  schema: { type: "object", additionalProperties: false, required: ["ok"], properties: { ok: { type: "boolean" }, level: { enum: ["low", "high"] } } },
});

describe("checkFinalAnswer", () => {
  it.each([
    ['{"ok": true}', { ok: true }],
    ['  {"ok": false}\n', { ok: false }],
    ['```json\n{"ok": true}\n```', { ok: true }],
    ['\n```json  \n{"ok": true, "level": "low"}```\n', { ok: true, level: "low" }],
  ])("accepts %j", (text, value) => {
    expect(checkFinalAnswer(text, output)).toEqual({ valid: true, value });
  });

  it.each([
    ["prose around the JSON", 'Sure: {"ok": true}', "the answer is not JSON"],
    ["a fence without json", '```\n{"ok": true}\n```', "the answer is not JSON"],
    ["two fences", '```json\n{"ok": true}\n```\n```json\n{"ok": true}\n```', "the answer is not JSON"],
    ["an empty reply", "   ", "the answer is empty"],
    ["a wrong type", '{"ok": "yes"}', "/ok: must be boolean"],
    ["a value outside the enum", '{"ok": true, "level": "mid"}', '/level: must be equal to one of the allowed values ("low", "high")'],
    ["a property too many", '{"ok": true, "extra": 1}', "(the answer): must NOT have additional properties ('extra')"],
  ])("refuses %s", (_name, text, problem) => {
    const check = checkFinalAnswer(text, output);
    expect(check.valid).toBe(false);
    expect(check.valid ? [] : check.problems.join("\n")).toContain(problem);
  });

  it("the re-ask lists the problems and quotes the schema", () => {
    const message = reaskMessage(["/ok: must be boolean"], output);
    expect(message).toContain("- /ok: must be boolean");
    expect(message).toContain(JSON.stringify(output.schema.schema));
  });
});

const at = (seq: number, event: Record<string, unknown>) => ({ seq, timestamp: "2026-01-01T00:00:00.000Z", ...event }) as JournalEvent;
const thought = (seq: number, iteration: number, content: string, calls = 0) =>
  at(seq, { type: "THOUGHT", iteration, content, tool_calls: Array.from({ length: calls }, (_, i) => ({ id: `c${i}`, name: "t", arguments: "{}" })), usage: null, model: "m" });

describe("answersReask and unansweredFinalAnswer", () => {
  it("an answer right after the engine's re-ask answers it; after the user's message or a tool result it does not", () => {
    const reask = at(3, { type: "USER_MESSAGE", content: "again", source: "engine" });
    expect(answersReask([at(1, { type: "USER_MESSAGE", content: "task" }), thought(2, 1, "x"), reask, at(4, { type: "CONTEXT_WINDOW" })])).toBe(true);
    expect(answersReask([at(1, { type: "USER_MESSAGE", content: "task" })])).toBe(false);
    expect(answersReask([reask, thought(4, 2, "", 1), at(5, { type: "ACTION_RESULT" })])).toBe(false);
  });

  it("the last final answer with no message after it, across an invocation's end", () => {
    const answer = thought(2, 1, "not json");
    expect(unansweredFinalAnswer([at(1, { type: "USER_MESSAGE", content: "task" }), answer, at(3, { type: "ERROR" }), at(4, { type: "ENGINE_END" }), at(5, { type: "ENGINE_START" })])).toBe(answer);
    expect(unansweredFinalAnswer([answer, at(3, { type: "USER_MESSAGE", content: "more" })])).toBeNull();
    expect(unansweredFinalAnswer([thought(2, 1, "", 1)])).toBeNull();
  });
});
