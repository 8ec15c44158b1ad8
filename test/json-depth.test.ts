// A JSON text's nesting depth by one scan: what a recursive walk of the parsed value finds, brackets inside strings and escapes aside, and a scan that stops past a bound.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonDepth } from "../src/json-depth.js";

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
});
