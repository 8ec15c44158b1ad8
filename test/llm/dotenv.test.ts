// The .env parser: the usual syntax, and bad lines reported with their number instead of crashing.
import { describe, expect, it } from "vitest";
import { parseDotenv, type DotenvWarning } from "../../src/llm/dotenv.js";

describe("parseDotenv", () => {
  it("reads plain, exported, quoted and commented values", () => {
    const text = [
      "# a comment",
      "",
      "PLAIN=value",
      "export EXPORTED=yes",
      'DOUBLE="two words # not a comment"',
      "SINGLE='raw \\n stays'",
      "TRAILING=kept # dropped",
      "HASH=abc#def",
      "SPACED = padded ",
      "EMPTY=",
      'ESCAPED="line\\nbreak \\"q\\""',
    ].join("\n");
    expect(parseDotenv(text)).toEqual({
      PLAIN: "value",
      EXPORTED: "yes",
      DOUBLE: "two words # not a comment",
      SINGLE: "raw \\n stays",
      TRAILING: "kept",
      HASH: "abc#def",
      SPACED: "padded",
      EMPTY: "",
      ESCAPED: 'line\nbreak "q"',
    });
  });

  it("reads a double-quoted value over several lines and handles CRLF", () => {
    expect(parseDotenv('KEY="first\r\nsecond"\r\nNEXT=1\r\n')).toEqual({ KEY: "first\nsecond", NEXT: "1" });
  });

  it("skips malformed lines with a warning naming the line, and keeps reading", () => {
    const warnings: DotenvWarning[] = [];
    const values = parseDotenv(["GOOD=1", "no equals sign", "=novalue", "1BAD=x", "OPEN='never closed", "AFTER=2"].join("\n"), (w) => warnings.push(w));
    expect(values).toEqual({ GOOD: "1", AFTER: "2" });
    expect(warnings.map((w) => w.line)).toEqual([2, 3, 4, 5]);
    expect(warnings[0]?.message).toBe("expected KEY=value");
    expect(warnings[2]?.message).toMatch(/"1BAD" is not a valid variable name/);
    expect(warnings[3]?.message).toMatch(/never closed/);
  });
});
