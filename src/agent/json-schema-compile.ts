// Compiles an output schema (JSON Schema draft 2020-12 or draft-07) with ajv and a linear-time regular-expression engine, both loaded only when a schema is in play, into a validator whose problems read one line each.
import type { ErrorObject } from "ajv";
import { ConfigError, errorMessage } from "../errors.js";
import { MAX_SCHEMA_DEPTH, schemaShapeProblem } from "./schema-shape.js";

export const JSON_SCHEMA_DRAFTS = ["2020-12", "draft-07"] as const;
export type JsonSchemaDraft = (typeof JSON_SCHEMA_DRAFTS)[number];

/** The problems of a value against the schema, one readable line each; empty when it is valid. */
export type SchemaValidator = (value: unknown) => string[];

/** A value's problems beyond these are summed up in one more line: the model and the person need the first few. */
const MAX_PROBLEMS = 10;
const MAX_PROBLEM_CHARS = 300;

/**
 * `where` names the schema in a refusal ("agent.yaml: output_schema"). Unknown keywords are
 * refused (a misspelt `requried` would otherwise check nothing); `format` is an annotation only.
 * Patterns run on a linear-time engine (linear-regexp.ts); a schema whose checking would never end
 * (a loop of same-value steps) or nests past MAX_SCHEMA_DEPTH is refused before ajv sees it.
 */
export async function compileJsonSchema(schema: Record<string, unknown>, draft: JsonSchemaDraft, where: string): Promise<SchemaValidator> {
  // Loaded here, on first need: runs without an output schema never pay for it.
  const { Ajv, Ajv2020, metaValidator, linearRegExpEngine } = await import("./ajv.js");
  const refuse = (problems: string, cause?: unknown): never => {
    throw new ConfigError(`${where}: not a valid JSON Schema (${draft}): ${problems}; fix the schema there`, { cause });
  };
  checkShape(schema, where);
  // The meta-schema check comes ready-made from the build (meta-validator.ts); ajv would compile the meta-schema first.
  const meta = metaValidator(draft);
  if (!meta(schema)) refuse(describeProblems(meta.errors ?? [], "/").join("; "));
  const options = { ...AJV_OPTIONS, code: { regExp: linearRegExpEngine } };
  const ajv = draft === "2020-12" ? new Ajv2020(options) : new Ajv(options);
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema);
  } catch (err) {
    // An unknown keyword, a $ref it cannot resolve, a pattern the linear-time engine cannot run: ajv's or the engine's words.
    return refuse(errorMessage(err), err);
  }
  return (value) => (validate(value) ? [] : describeProblems(validate.errors ?? [], "(the answer)"));
}

/** Refuses what would make checking never end, or exhaust the stack, naming where it is. */
function checkShape(schema: Record<string, unknown>, where: string): void {
  const problem = schemaShapeProblem(schema);
  if (problem === null) return;
  if (problem.kind === "too-deep") {
    throw new ConfigError(`${where}: the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels (at ${problem.at}); no answer needs that: flatten it, or name the repeated part once in $defs and refer to it`);
  }
  throw new ConfigError(
    `${where}: $ref loop ${problem.path.join(" → ")}: each step checks the same value again and none describes a part of it, ` +
      "so checking an answer would never end; let one of them describe a property or an item (properties, items), or remove one $ref",
  );
}

const AJV_OPTIONS = { allErrors: true, strict: true, strictTypes: false, strictTuples: false, strictRequired: false, validateFormats: false, validateSchema: false, logger: false } as const;

/** `root`: how the top level is named ("(the answer)", or "/" in a schema). */
function describeProblems(errors: readonly ErrorObject[], root: string): string[] {
  const lines = errors.slice(0, MAX_PROBLEMS).map((error) => bounded(`${error.instancePath === "" ? root : error.instancePath}: ${error.message ?? "is invalid"}${detail(error)}`));
  if (errors.length > MAX_PROBLEMS) lines.push(`…and ${errors.length - MAX_PROBLEMS} more`);
  return lines;
}

/** What ajv's message leaves out: the allowed values, the property that should not be there. */
function detail(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) return ` (${params.allowedValues.map((value) => JSON.stringify(value)).join(", ")})`;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") return ` ('${params.additionalProperty}')`;
  if (error.keyword === "const") return ` (${JSON.stringify(params.allowedValue)})`;
  return "";
}

function bounded(line: string): string {
  return line.length > MAX_PROBLEM_CHARS ? `${line.slice(0, MAX_PROBLEM_CHARS)}…` : line;
}
