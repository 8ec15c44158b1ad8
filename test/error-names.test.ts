// Every engine error keeps its class's name in the minified bundle (scripts/bundle.mjs builds the engine without keepNames): errors.ts names each class itself.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import * as errors from "../src/errors.js";

const { keepClassNames } = errors;

describe("keepClassNames", () => {
  it("gives a class whose name minification changed its written name back, and so its errors'", () => {
    const Minified = class xe extends errors.EngineError {};
    keepClassNames({ BuildStepError: Minified });
    expect(Minified.name).toBe("BuildStepError");
    expect(new Minified("broken").name).toBe("BuildStepError");
    expect(String(new Minified("broken"))).toBe("BuildStepError: broken");
  });

  it("has named every DeltaError class of src/, so a new one cannot be forgotten", async () => {
    const classes = await deltaErrorClassesOfSources();
    expect(classes.length).toBeGreaterThan(25);
    expect(classes.map(([name]) => name)).toEqual(expect.arrayContaining(["ConfigError", "SessionError", "BatchHttpError"]));
    for (const [name, errorClass] of classes) {
      // Named by keepClassNames: a non-configurable own name, where a class's own is configurable.
      expect(Object.getOwnPropertyDescriptor(errorClass, "name"), name).toMatchObject({ value: name, configurable: false });
    }
  });
});

/**
 * Every class of src/ that extends DeltaError, directly or through another: found by its declaration in the text (so one
 * a module keeps to itself is found too, and must then be exported to be checked), taken from the module's exports.
 */
async function deltaErrorClassesOfSources(): Promise<[string, unknown][]> {
  const root = join(import.meta.dirname, "../src");
  const declared = new Map<string, { base: string; file: string }>();
  for (const entry of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!entry.endsWith(".ts")) continue;
    const file = join(root, entry);
    for (const [, name, base] of readFileSync(file, "utf8").matchAll(/\bclass (\w+) extends (\w+)/g)) declared.set(name!, { base: base!, file });
  }
  const isDeltaError = (name: string): boolean => name === "DeltaError" || (declared.has(name) && isDeltaError(declared.get(name)!.base));
  const found: [string, unknown][] = [];
  for (const [name, { file }] of declared) {
    if (!isDeltaError(name)) continue;
    const exported = ((await import(file)) as Record<string, unknown>)[name];
    if (exported === undefined) throw new Error(`${file}: class ${name} extends DeltaError but is not exported, so its name cannot be checked`);
    found.push([name, exported]);
  }
  return found;
}
