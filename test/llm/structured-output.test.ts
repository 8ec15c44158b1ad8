// Which native structured-output field each protocol gets: OpenAI's strict rules, Anthropic's models and schema subset.
import { describe, expect, it } from "vitest";
import { anthropicHasStructuredOutputs, nativeOutputFormat } from "../../src/llm/structured-output.js";

const STRICT = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  required: ["verdict", "items"],
  properties: {
    verdict: { enum: ["pass", "fail"] },
    items: { type: "array", items: { type: "object", additionalProperties: false, required: ["name"], properties: { name: { type: "string" } } } },
  },
};

describe("OpenAI protocols", () => {
  it("a schema within the strict rules is sent strict, without $schema", () => {
    for (const protocol of ["openai", "openai-responses"] as const) {
      const native = nativeOutputFormat(protocol, "gpt-4o", STRICT);
      expect(native.fallback).toBeNull();
      expect(native.format).toMatchObject({ name: "final_answer", strict: true });
      expect(native.format!.schema).not.toHaveProperty("$schema");
    }
  });

  it.each([
    ["an optional property", { ...STRICT, required: ["verdict"] }, "needs every property listed in required (#: 'items' is not"],
    ["a nested object open to more properties", { ...STRICT, properties: { ...STRICT.properties, items: { type: "array", items: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } } }, "needs additionalProperties: false on every object (#/properties/items/items does not set it)"],
    ["a top level that is not an object", { type: "array", items: { type: "string" } }, "needs the top level to be an object schema"],
    ["oneOf", { ...STRICT, properties: { ...STRICT.properties, verdict: { oneOf: [{ const: "pass" }, { const: "fail" }] } } }, "does not take oneOf (at #/properties/verdict)"],
  ])("%s falls back to strict: false, naming the rule", (_name, schema, rule) => {
    const native = nativeOutputFormat("openai", "gpt-4o", schema);
    expect(native.format).toMatchObject({ strict: false });
    expect(native.fallback).toContain(`OpenAI's strict mode ${rule}`);
    expect(native.fallback).toContain("the engine checks the final answer itself");
  });
});

describe("Anthropic", () => {
  it.each([
    ["claude-sonnet-4-5", true],
    ["claude-sonnet-4-5-20250929", true],
    ["claude-haiku-4-5", true],
    ["claude-opus-4-7", true],
    ["claude-sonnet-5", true],
    ["claude-opus-5-20270101", true],
    ["claude-sonnet-4-20250514", false],
    ["claude-opus-4-1-20250805", false],
    ["claude-3-5-haiku-latest", false],
    ["gpt-4o", false],
  ])("%s has structured outputs: %s", (model, has) => {
    expect(anthropicHasStructuredOutputs(model)).toBe(has);
  });

  it("a supported model and schema get output_config's schema; an unsupported keyword or a recursive schema get none, with the reason", () => {
    expect(nativeOutputFormat("anthropic", "claude-sonnet-4-5", STRICT)).toMatchObject({ format: { strict: true }, fallback: null });
    const bounded = { ...STRICT, properties: { ...STRICT.properties, verdict: { type: "string", maxLength: 4 } } };
    expect(nativeOutputFormat("anthropic", "claude-sonnet-4-5", bounded)).toEqual({ format: null, fallback: expect.stringContaining("Anthropic's structured outputs do not take maxLength (at #/properties/verdict)") });
    const tree = { type: "object", additionalProperties: false, properties: { node: { $ref: "#/$defs/node" } }, $defs: { node: { type: "object", additionalProperties: false, properties: { children: { type: "array", items: { $ref: "#/$defs/node" } } } } } };
    expect(nativeOutputFormat("anthropic", "claude-sonnet-4-5", tree).fallback).toContain("take no recursive schema");
    expect(nativeOutputFormat("anthropic", "claude-3-5-sonnet-latest", STRICT)).toEqual({ format: null, fallback: expect.stringContaining("model claude-3-5-sonnet-latest has no structured outputs") });
  });
});
