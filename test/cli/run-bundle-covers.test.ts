// What the code cache written at exit lists, and when a cache V8 accepted is left as it is.
import { describe, expect, it } from "vitest";
import { coversToWrite } from "../../src/cli/run-bundle.js";

describe("coversToWrite", () => {
  it("lists what this process ran when there was no cache (or V8 rejected it)", () => {
    expect(coversToWrite(null, new Set(["THOUGHT", "ENGINE_END"]), 1_000)).toEqual(["ENGINE_END", "THOUGHT"]);
  });

  it("lists both the accepted cache's paths and this process's when V8's data grew or kept its size", () => {
    const accepted = { covers: ["ENGINE_END", "THOUGHT"], bytes: 1_297_850 };
    expect(coversToWrite(accepted, new Set(["THOUGHT", "ACTION_REQUEST", "ACTION_RESULT"]), 1_343_959)).toEqual(["ACTION_REQUEST", "ACTION_RESULT", "ENGINE_END", "THOUGHT"]);
    expect(coversToWrite(accepted, new Set(["ACTION_RESULT"]), 1_297_850)).toEqual(["ACTION_RESULT", "ENGINE_END", "THOUGHT"]);
  });

  it("leaves the cache as it is when V8's data shrank: the collector dropped functions it held (start-up's)", () => {
    // Measured: the bench's continue of a 100 MB journal, whose window had moved (CONTEXT_WINDOW), made 0.88 MB of a 1.34 MB cache.
    expect(coversToWrite({ covers: ["ACTION_RESULT", "THOUGHT"], bytes: 1_344_631 }, new Set(["CONTEXT_WINDOW"]), 883_752)).toBeNull();
  });
});
