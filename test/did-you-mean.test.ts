// The nearest known word to a mistyped one: a slip of the fingers is matched, another word is not.
import { describe, expect, it } from "vitest";
import { closestWord, didYouMean } from "../src/did-you-mean.js";

describe("closestWord", () => {
  it("matches a letter missing, doubled, swapped or in the wrong case", () => {
    expect(closestWord("formt", ["format", "output"])).toBe("format");
    expect(closestWord("runn", ["run", "report"])).toBe("run");
    expect(closestWord("contineu", ["continue", "list-runs"])).toBe("continue");
    expect(closestWord("v", ["V", "h"])).toBe("V");
  });

  it("matches the one word a prefix starts, and nothing when two start with it", () => {
    expect(closestWord("list", ["list-runs", "run"])).toBe("list-runs");
    expect(closestWord("re", ["report", "resume"])).toBeUndefined();
  });

  it("leaves a different word alone, and an exact word is no suggestion", () => {
    expect(closestWord("last", ["first", "format"])).toBeUndefined();
    expect(closestWord("answer-schema", ["output-schema", "output"])).toBeUndefined();
    expect(closestWord("run", ["run"])).toBeUndefined();
  });

  it("didYouMean is a sentence to append, or nothing", () => {
    expect(didYouMean("jsn", ["text", "json"])).toBe(" Did you mean json?");
    expect(didYouMean("xml", ["text", "json"])).toBe("");
    expect(didYouMean("formt", ["format"], (word) => `--${word}`)).toBe(" Did you mean --format?");
  });
});
