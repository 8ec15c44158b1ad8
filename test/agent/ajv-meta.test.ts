// The meta-schema checks the build generates (dist/delta-ajv.cjs) judge a schema exactly as ajv's compiled meta-schemas do.
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { META_SCHEMA_IDS, metaValidator } from "../../src/agent/ajv-meta.js";

const require = createRequire(import.meta.url);
const dist = join(import.meta.dirname, "../../dist");
const bundled = (): { metaValidator: typeof metaValidator } => require(join(dist, "run-bundle.cjs")).requireBundle(join(dist, "delta-ajv.cjs"));

const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false },
  { type: "strin" },
  { type: "object", properties: { n: { type: "number", minimum: "zero" } }, required: "n" },
  { type: "array", items: [{ type: "string" }], prefixItems: { type: 3 }, $defs: { x: { enum: 5 } }, definitions: { y: { anyOf: [] } } },
  { $ref: "#/$defs/a", $defs: { a: { oneOf: [{ const: 1 }, { type: ["string", "nul"] }] } } },
];

describe("meta-schema checks generated at build time", () => {
  for (const draft of Object.keys(META_SCHEMA_IDS) as (keyof typeof META_SCHEMA_IDS)[]) {
    it(`${draft}: the same verdict and the same errors as the meta-schema compiled by ajv`, () => {
      const generated = bundled().metaValidator(draft);
      const compiled = metaValidator(draft);
      // A validator ajv compiled carries its schema; generated code is a plain function.
      expect(compiled).toHaveProperty("schema");
      expect(generated).not.toHaveProperty("schema");
      for (const schema of SCHEMAS) {
        const verdict = compiled(schema);
        expect(generated(schema), JSON.stringify(schema)).toBe(verdict);
        expect(generated.errors ?? null).toEqual(compiled.errors ?? null);
      }
      expect(SCHEMAS.filter((schema) => !compiled(schema)).length).toBeGreaterThanOrEqual(3);
    });
  }
});
