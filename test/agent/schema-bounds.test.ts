// Output schemas that could hang or exhaust the engine: linear-time patterns, same-value $ref loops, nesting, and what still compiles.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { compileJsonSchema } from "../../src/agent/json-schema-compile.js";
import { MAX_SCHEMA_DEPTH, schemaShapeProblem } from "../../src/agent/schema-shape.js";

const compile = (schema: Record<string, unknown>, draft: "2020-12" | "draft-07" = "2020-12") => compileJsonSchema(schema, draft, "agent.yaml: output_schema");

describe("patterns run on the linear-time engine", () => {
  it("check pattern and patternProperties each with their own pattern, anywhere in the text, Unicode classes and named groups included", async () => {
    const validate = await compile({
      type: "object",
      properties: { code: { type: "string", pattern: "^[A-Z]{3}-\\d+$" }, word: { type: "string", pattern: "\\p{L}+" }, year: { type: "string", pattern: "(?<y>\\d{4})" } },
      patternProperties: { "^x-": { type: "number" } },
    });
    expect(validate({ code: "ABC-12", word: "été", year: "in 1999", "x-a": 1 })).toEqual([]);
    expect(validate({ code: "abc-12", word: "123", year: "99", "x-a": "no" })).toEqual([
      '/code: must match pattern "^[A-Z]{3}-\\d+$"',
      '/word: must match pattern "\\p{L}+"',
      '/year: must match pattern "(?<y>\\d{4})"',
      "/x-a: must be number",
    ]);
  });

  it("answer at once for a pattern a backtracking engine would take hours on", async () => {
    const validate = await compile({ type: "string", pattern: "^([a-zA-Z0-9]+)*@example\\.com$" });
    expect(validate(`${"a".repeat(5000)}!`)).toEqual(['(the answer): must match pattern "^([a-zA-Z0-9]+)*@example\\.com$"']);
    expect(validate("abc@example.com")).toEqual([]);
  });

  it.each([
    ["a lookahead", "^(?=.*\\d).+$"],
    ["a negative lookahead", "^(?!admin).*$"],
    ["a lookbehind", "(?<=\\$)\\d+"],
    ["a backreference", "^(a)\\1$"],
  ])("refuse %s at load, naming the pattern and what the engine lacks", async (_name, pattern) => {
    const refusal = compile({ type: "string", pattern });
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refusal).rejects.toThrow(`pattern ${JSON.stringify(pattern)} cannot be matched in linear time`);
    await expect(refusal).rejects.toThrow("lookahead (?=…) (?!…), lookbehind (?<=…) (?<!…) and backreferences (\\1, \\k<name>)");
  });
});

describe("schemaShapeProblem", () => {
  it.each([
    ["two definitions that refer to each other", { $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }, ["#/$defs/a", "#/$defs/b", "#/$defs/a"]],
    ["the root referring to itself", { $ref: "#" }, ["#", "#"]],
    ["a definition in its own allOf", { $defs: { a: { allOf: [{ $ref: "#/$defs/a" }] } } }, ["#/$defs/a", "#/$defs/a/allOf/0", "#/$defs/a"]],
    ["a loop through not and if", { $defs: { a: { not: { $ref: "#/$defs/b" } }, b: { if: { $ref: "#/$defs/a" } } } }, ["#/$defs/b", "#/$defs/b/if", "#/$defs/a", "#/$defs/a/not", "#/$defs/b"]],
    ["draft-07 definitions with an escaped name", { definitions: { "a/b": { $ref: "#/definitions/a~1b" } } }, ["#/definitions/a~1b", "#/definitions/a~1b"]],
  ])("finds %s", (_name, schema, path) => {
    expect(schemaShapeProblem(schema)).toEqual({ kind: "loop", path });
  });

  it.each([
    ["a tree: the loop passes through an item", { type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } }],
    ["a linked list: through a property", { $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } }, $ref: "#/$defs/node" }],
    ["a chain without a loop", { $defs: { a: { $ref: "#/$defs/b" }, b: { type: "string" } }, $ref: "#/$defs/a" }],
    ["a $ref inside data (enum, const)", { enum: [{ $ref: "#" }], const: { $ref: "#" } }],
  ])("lets %s through", (_name, schema) => {
    expect(schemaShapeProblem(schema)).toBeNull();
  });

  it("refuses nesting past its bound, naming where, without using the stack for it", () => {
    let schema: Record<string, unknown> = { type: "string" };
    for (let depth = 0; depth < 10_000; depth += 1) schema = { type: "object", properties: { p: schema } };
    expect(schemaShapeProblem(schema)).toEqual({ kind: "too-deep", at: `#${"/properties/p".repeat(MAX_SCHEMA_DEPTH + 1)}` });
  });
});

describe("compileJsonSchema refuses what would never end", () => {
  it("a $ref loop, naming it (not \"Maximum call stack size exceeded\")", async () => {
    const refusal = compile({ $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" });
    await expect(refusal).rejects.toThrow("agent.yaml: output_schema: $ref loop #/$defs/a → #/$defs/b → #/$defs/a: each step checks the same value again and none describes a part of it");
  });

  it("a recursive schema that descends is compiled and checks nested values", async () => {
    const validate = await compile({ type: "object", properties: { children: { type: "array", items: { $ref: "#" } } } }, "draft-07");
    expect(validate({ children: [{ children: [{ children: 1 }] }] })).toEqual(["/children/0/children/0/children: must be array"]);
  });
});
