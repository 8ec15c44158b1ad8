// A JSON text's nesting depth by one scan: what a recursive walk of the parsed value finds, brackets inside strings and escapes aside, and a scan that stops past a bound; whether it passes a limit, brackets counted first.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonDepth, nestsDeeperThan } from "../src/json-depth.js";

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (typeof value === "object" && value !== null) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe("jsonDepth", () => {
  it("finds the depth a walk of the parsed value finds, for any JSON, strings with brackets, quotes and backslashes included", () => {
    fc.assert(
      fc.property(fc.json({ depthSize: "large" }), (text) => {
        expect(jsonDepth(text)).toBe(depthOf(JSON.parse(text)));
      }),
    );
    expect(jsonDepth(String.raw`{"a":"[[{\"}\\","b":[{"c":"]]"}]}`)).toBe(3);
  });

  it("stops once the depth passes the bound, and counts a text of 20,000 levels without recursing", () => {
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    expect(jsonDepth(deep)).toBe(20_000);
    expect(jsonDepth(deep, 64)).toBe(65);
    expect(jsonDepth("[[1]]", 64)).toBe(2);
  });

  it("nestsDeeperThan: whether the depth passes the limit, for any JSON and limit, brackets inside strings included", () => {
    fc.assert(
      fc.property(fc.json({ depthSize: "large" }), fc.nat(12), (text, limit) => {
        expect(nestsDeeperThan(text, limit)).toBe(depthOf(JSON.parse(text)) > limit);
      }),
    );
    // More brackets than the limit, inside strings or side by side, but none deeper: the scan says so.
    expect(nestsDeeperThan(`{"a":"${"[".repeat(100)}"}`, 64)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(Array.from({ length: 100 }, () => [])), 64)).toBe(false);
    expect(nestsDeeperThan(`${"[".repeat(65)}${"]".repeat(65)}`, 64)).toBe(true);
    expect(nestsDeeperThan(`${"[".repeat(64)}${"]".repeat(64)}`, 64)).toBe(false);
  });
});
