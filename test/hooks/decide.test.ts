import { describe, expect, it } from "vitest";
import { decideOutcome, parseJsonObject, REASON_MAX_CHARS } from "../../src/hooks/decide.js";
import type { ProcessResult } from "../../src/process/run-process.js";

function result(overrides: Partial<ProcessResult<string>>): ProcessResult<string> {
  return { stdout: "", stderr: "", exitCode: 0, signal: null, timedOut: false, aborted: false, overLimit: false, outputLeftOpen: false, durationMs: 5, spawnError: null, ...overrides };
}

describe("decideOutcome", () => {
  it("fails closed for a pre hook killed by a signal, naming the signal", () => {
    expect(decideOutcome("pre_llm_request", result({ exitCode: null, signal: "SIGSEGV" }), 1000)).toEqual({
      kind: "block",
      reason: "pre_llm_request hook failed: killed by SIGSEGV",
    });
  });

  it("fails open for an on_ hook whose output was too large", () => {
    expect(decideOutcome("on_run_end", result({ overLimit: true, exitCode: null, signal: "SIGKILL" }), 1000)).toEqual({
      kind: "continue",
      warning: "on_run_end hook failed: its output was too large",
    });
  });

  it("keeps only the tail of a long stderr in a failure message", () => {
    const stderr = `${"noise\n".repeat(2000)}the real error`;
    const outcome = decideOutcome("post_tool_execution", result({ exitCode: 4, stderr }), 1000);
    expect(outcome.kind).toBe("continue");
    const warning = outcome.kind === "continue" ? (outcome.warning ?? "") : "";
    expect(warning.endsWith("the real error")).toBe(true);
    expect(warning.length).toBeLessThan(2200);
  });

  it("clips a very long block reason so it stays readable as an observation", () => {
    const outcome = decideOutcome("pre_tool_execution", result({ exitCode: 2, stderr: "r".repeat(REASON_MAX_CHARS * 2) }), 1000);
    expect(outcome.kind === "block" && outcome.reason.length).toBeLessThan(REASON_MAX_CHARS + 100);
  });

  it("falls back to a generic reason when exit 2 prints nothing", () => {
    expect(decideOutcome("pre_tool_execution", result({ exitCode: 2 }), 1000)).toEqual({ kind: "block", reason: "blocked by pre_tool_execution hook (exit 2)" });
  });

  it("treats a decision other than block as ordinary output", () => {
    expect(decideOutcome("pre_tool_execution", result({ stdout: '{"decision":"approve"}' }), 1000)).toEqual({ kind: "continue", output: { decision: "approve" } });
  });
});

describe("parseJsonObject", () => {
  it("accepts only a JSON object, not arrays, scalars, text or broken JSON", () => {
    expect(parseJsonObject(' {"a": 1}\n')).toEqual({ a: 1 });
    expect(parseJsonObject("[1]")).toBeUndefined();
    expect(parseJsonObject("42")).toBeUndefined();
    expect(parseJsonObject("hello")).toBeUndefined();
    expect(parseJsonObject('{"a": ')).toBeUndefined();
  });
});
