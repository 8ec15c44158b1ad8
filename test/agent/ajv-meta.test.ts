// The meta-schema checks the build generates (dist/ajv-meta.cjs) judge a schema exactly as ajv's compiled meta-schemas do, and the ajv bundle uses them.
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileMetaValidator, META_SCHEMA_IDS } from "../../src/agent/ajv-meta.js";
import { GENERATED_META_MODULE, metaValidator } from "../../src/agent/meta-validator.js";

const require = createRequire(import.meta.url);
const dist = join(import.meta.dirname, "../../dist");
const load = (file: string): unknown => require(join(dist, "run-bundle.cjs")).requireBundle(join(dist, file));
const bundled = (): { metaValidator: typeof metaValidator } => load("delta-ajv.cjs") as { metaValidator: typeof metaValidator };
const generatedModule = (): { metaValidators: Record<string, ReturnType<typeof compileMetaValidator>> } => load(GENERATED_META_MODULE) as never;

const SCHEMAS: Record<string, unknown>[] = [
  { type: "object", properties: { answer: { type: "string" } }, required: ["answer"], additionalProperties: false },
  { type: "strin" },
  { type: "object", properties: { n: { type: "number", minimum: "zero" } }, required: "n" },
  { type: "array", items: [{ type: "string" }], prefixItems: { type: 3 }, $defs: { x: { enum: 5 } }, definitions: { y: { anyOf: [] } } },
  { $ref: "#/$defs/a", $defs: { a: { oneOf: [{ const: 1 }, { type: ["string", "nul"] }] } } },
];

describe("meta-schema checks generated at build time", () => {
  it("are what the ajv bundle checks with; from sources, where no build lies beside the module, ajv compiles them", () => {
    for (const draft of Object.keys(META_SCHEMA_IDS) as (keyof typeof META_SCHEMA_IDS)[]) {
      // A validator ajv compiled carries its schema; generated code is a plain function.
      expect(bundled().metaValidator(draft)).not.toHaveProperty("schema");
      expect(bundled().metaValidator(draft).name).toBe(generatedModule().metaValidators[draft]!.name);
      expect(metaValidator(draft)).toHaveProperty("schema");
    }
  });

  for (const draft of Object.keys(META_SCHEMA_IDS) as (keyof typeof META_SCHEMA_IDS)[]) {
    it(`${draft}: the same verdict and the same errors as the meta-schema compiled by ajv`, () => {
      const generated = generatedModule().metaValidators[draft]!;
      const compiled = compileMetaValidator(draft);
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
