import { describe, expect, it } from "vitest";
import { RunRefusedError } from "../../src/errors.js";
import { runPaths } from "../../src/store/run-dir.js";
import { generateRunId, isRunId, parseRunId } from "../../src/store/run-id.js";

describe("parseRunId", () => {
  it.each(["a", "run-1", "R_2.final", "550e8400-e29b-41d4-a716-446655440000", "x".repeat(128)])("accepts %s", (id) => {
    expect(parseRunId(id)).toBe(id);
    expect(isRunId(id)).toBe(true);
  });

  it.each(["", ".hidden", "..", "a/b", "a b", "ü", "x".repeat(129), "a\nb", "a\\b"])("refuses %j and says what is allowed", (id) => {
    expect(() => parseRunId(id)).toThrow(RunRefusedError);
    expect(() => parseRunId(id)).toThrow(/1 to 128 characters of letters, digits, '\.', '_' and '-'/);
    expect(isRunId(id)).toBe(false);
  });
});

describe("RunId", () => {
  it("is checked once, where an id enters: a run's paths take only a parsed one, and do not check it again", () => {
    // @ts-expect-error a plain string is not a RunId
    expect(runPaths("/w", "r1").runDir).toBe("/w/.delta/r1");
    expect(runPaths("/w", parseRunId("r1")).runDir).toBe("/w/.delta/r1");
  });
});

describe("generateRunId", () => {
  it("formats the UTC time and six random hex digits", () => {
    expect(generateRunId(new Date("2025-10-13T14:35:22.123Z"))).toMatch(/^20251013_143522_[0-9a-f]{6}$/);
  });

  it("produces ids that pass validation and differ from each other", () => {
    const ids = new Set(Array.from({ length: 50 }, () => generateRunId()));
    expect(ids.size).toBeGreaterThan(45);
    for (const id of ids) expect(parseRunId(id)).toBe(id);
  });
});
