// The check of a schema against its draft's meta-schema. Here it is compiled from ajv's copies of the meta-schemas; the build
// puts code generated from the same meta-schemas in its place (scripts/ajv-meta.mjs), so a run never compiles a meta-schema.
import { Ajv, type ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The meta-schema of each draft an output schema may be written in. */
export const META_SCHEMA_IDS = {
  "2020-12": "https://json-schema.org/draft/2020-12/schema",
  "draft-07": "http://json-schema.org/draft-07/schema",
} as const;

/** Every problem, not the first: a schema's author fixes them all at once. */
export const META_OPTIONS = { allErrors: true, strict: false, logger: false } as const;

/** Validates a schema against the meta-schema of `draft`; its `errors` point into the schema. */
export function metaValidator(draft: keyof typeof META_SCHEMA_IDS): ValidateFunction {
  const ajv = draft === "2020-12" ? new Ajv2020(META_OPTIONS) : new Ajv(META_OPTIONS);
  return ajv.getSchema(META_SCHEMA_IDS[draft])!;
}
