import { describe, expect, it } from "vitest";
import { validatePostResponseAnnotation } from "../../src/hooks/response-annotation.js";
import type { LlmReply } from "../../src/conversation.js";

const reply: LlmReply = {
  content: "listing",
  tool_calls: [{ id: "c1", name: "ls", arguments: "{}" }],
  usage: { input_tokens: 10, output_tokens: 2 },
  model: "m",
  finish_reason: "tool_calls",
};

describe("validatePostResponseAnnotation", () => {
  it("returns nothing when the hook printed no JSON object", () => {
    expect(validatePostResponseAnnotation(reply, undefined)).toEqual({});
  });

  it("returns a string or object annotation", () => {
    expect(validatePostResponseAnnotation(reply, { annotation: "looks fine" })).toEqual({ annotation: "looks fine" });
    expect(validatePostResponseAnnotation(reply, { annotation: { score: 3 } })).toEqual({ annotation: { score: 3 } });
  });

  it("ignores an attempt to replace tool calls or content, with a warning, and keeps the annotation", () => {
    const reading = validatePostResponseAnnotation(reply, { annotation: "x", tool_calls: [], content: "changed" });
    expect(reading.annotation).toBe("x");
    expect(reading.warning).toContain("content, tool_calls");
  });

  it("accepts a hook that echoes its stdin with the reply unchanged", () => {
    const echoed = JSON.parse(JSON.stringify({ hook: "post_llm_response", run_id: "r", iteration: 1, payload: reply, annotation: "ok" })) as Record<string, unknown>;
    expect(validatePostResponseAnnotation(reply, echoed)).toEqual({ annotation: "ok" });
  });

  it("warns when an echoed payload was edited", () => {
    const reading = validatePostResponseAnnotation(reply, { payload: { ...reply, tool_calls: [] } });
    expect(reading.warning).toContain("payload");
  });

  it("warns about an annotation of the wrong type and drops it", () => {
    expect(validatePostResponseAnnotation(reply, { annotation: [1] })).toEqual({ warning: expect.stringContaining("an array") });
  });
});
