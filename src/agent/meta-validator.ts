// The check of a schema against its draft's meta-schema: the code the build generated for it (dist/ajv-meta.cjs, written by scripts/ajv-meta.mjs from ajv-meta.ts), found beside the ajv bundle this runs in; from sources, where no build lies beside it, the same check compiled by ajv (ajv-meta.ts).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ValidateFunction } from "ajv";
import { launcherHelper } from "../launcher-helper.js";
import { compileMetaValidator, type MetaSchemaDraft } from "./ajv-meta.js";

/** The generated module's name in dist/, beside delta-ajv.cjs. */
export const GENERATED_META_MODULE = "ajv-meta.cjs";

let generated: Record<MetaSchemaDraft, ValidateFunction> | null | undefined;

/** Validates a schema against the meta-schema of `draft`; its `errors` point into the schema. */
export function metaValidator(draft: MetaSchemaDraft): ValidateFunction {
  generated ??= generatedValidators();
  return generated?.[draft] ?? compileMetaValidator(draft);
}

/** The build's generated checks, loaded through the code cache as the other bundles are (cli/run-bundle.ts); null when this module runs from sources. */
function generatedValidators(): Record<MetaSchemaDraft, ValidateFunction> | null {
  const file = join(dirname(fileURLToPath(import.meta.url)), GENERATED_META_MODULE);
  const helper = launcherHelper();
  if (helper === null || !existsSync(file)) return null;
  return (helper.requireBundle(file) as { metaValidators: Record<MetaSchemaDraft, ValidateFunction> }).metaValidators;
}
