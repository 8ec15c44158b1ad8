// The drafts an output schema may be written in, the options its meta-schema check runs with, and that check compiled by ajv from its copies of the meta-schemas: what runs from sources, and what the build's generated checks (meta-validator.ts) are made from.
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The meta-schema of each draft an output schema may be written in. */
export const META_SCHEMA_IDS = {
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
  "draft-07": "http://json-schema.org/draft-07/schema",
} as const;

export type MetaSchemaDraft = keyof typeof META_SCHEMA_IDS;

/** Every problem, not the first: a schema's author fixes them all at once. */
export const META_OPTIONS = { allErrors: true, strict: false, logger: false } as const;

/** Validates a schema against the meta-schema of `draft`, compiling that meta-schema first (100–250 ms for 2020-12); its `errors` point into the schema. */
export function compileMetaValidator(draft: MetaSchemaDraft): ValidateFunction {
  const ajv = draft === "2020-12" ? new Ajv2020(META_OPTIONS) : new Ajv(META_OPTIONS);
  return ajv.getSchema(META_SCHEMA_IDS[draft])!;
}
