// Every engine error keeps its class's name in the minified bundle (scripts/bundle.mjs builds the engine without keepNames): errors.ts names each class itself.
import { describe, expect, it } from "vitest";
import * as errors from "../src/errors.js";
import { BatchHttpError } from "../src/llm/batch/batch-http.js";
import { SessionError } from "../src/sessions/errors.js";

const { DeltaError, keepClassNames } = errors;

describe("keepClassNames", () => {
  it("gives a class whose name minification changed its written name back, and so its errors'", () => {
    const Minified = class xe extends errors.EngineError {};
    keepClassNames({ BuildStepError: Minified });
    expect(Minified.name).toBe("BuildStepError");
    expect(new Minified("broken").name).toBe("BuildStepError");
    expect(String(new Minified("broken"))).toBe("BuildStepError: broken");
  });

  it("has named every DeltaError class, so a new one cannot be forgotten", () => {
    const classes = [...Object.entries(errors), ["SessionError", SessionError], ["BatchHttpError", BatchHttpError]] as [string, unknown][];
    const errorClasses = classes.filter(([, value]) => typeof value === "function" && (value === DeltaError || value.prototype instanceof DeltaError));
    expect(errorClasses.length).toBeGreaterThan(25);
    for (const [name, errorClass] of errorClasses) {
      // Named by keepClassNames: a non-configurable own name, where a class's own is configurable.
      expect(Object.getOwnPropertyDescriptor(errorClass, "name"), name).toMatchObject({ value: name, configurable: false });
    }
  });
});
