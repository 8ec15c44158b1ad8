// Whether and how a protocol's native structured-output mode asks for the final answer's schema: OpenAI's strict rules, Anthropic's models and schema subset.
import type { OutputFormat } from "../conversation.js";
import { isRecord } from "./is-record.js";
import type { ProviderName } from "./types.js";

type Schema = Record<string, unknown>;

/** The native field to send (null: none), and why the provider does not hold the answer to the schema, when it does not. */
interface NativeOutput {
  format: OutputFormat | null;
  /** Said once per invocation as a warning: the engine's own check and re-ask still hold the answer to the schema. */
  fallback: string | null;
}

/** The name the native field gives the schema (OpenAI: 1–64 of letters, digits, _ and -). */
const FORMAT_NAME = "final_answer";
const FALLBACK = "the engine checks the final answer itself and asks the model once more when it does not match";

/**
 * Chat Completions and Responses always get the schema, with `strict: true` only when it meets
 * OpenAI's strict rules. Anthropic gets `output_config.format` only for models with structured
 * outputs and schemas within their subset. Either way the engine validates the final answer.
 */
export function nativeOutputFormat(protocol: ProviderName, model: string, schema: Schema): NativeOutput {
  const wire = withoutMetaKeywords(schema);
  switch (protocol) {
    case "openai":
    case "openai-responses": {
      const broken = openAiStrictRule(schema);
      return {
        format: { name: FORMAT_NAME, schema: wire, strict: broken === null },
        fallback: broken === null ? null : `output_schema: OpenAI's strict mode ${broken}, so the schema is sent with strict: false (a hint to the model, not a constraint); ${FALLBACK}`,
      };
    }
    case "anthropic": {
      if (!anthropicHasStructuredOutputs(model)) {
        return { format: null, fallback: `output_schema: model ${model} has no structured outputs (Claude Haiku 4.5, Sonnet 4.5, Opus 4.5 and later have), so the schema is not sent; ${FALLBACK}` };
      }
      const broken = anthropicRule(schema);
      if (broken !== null) return { format: null, fallback: `output_schema: Anthropic's structured outputs ${broken}, so the schema is not sent; ${FALLBACK}` };
      return { format: { name: FORMAT_NAME, schema: wire, strict: true }, fallback: null };
    }
  }
}

/** Claude models from 4.5 on, by name (dated or not): `claude-sonnet-4-5`, `claude-opus-4-7-20260101`, `claude-sonnet-5`; Mythos. */
export function anthropicHasStructuredOutputs(model: string): boolean {
  if (/^claude-mythos/.test(model)) return true;
  // The minor version is one or two digits: in `claude-sonnet-4-20250514` the 2025… is a date.
  const version = /^claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:$|\D)/.exec(model);
  if (!version) return false;
  const [major, minor] = [Number(version[1]), Number(version[2] ?? 0)];
  return major > 4 || (major === 4 && minor >= 5);
}

/** `$schema` and `$comment` are for people and validators; providers' strict modes refuse keywords they do not know. */
function withoutMetaKeywords(schema: Schema): Schema {
  const { $schema: _schema, $comment: _comment, ...rest } = schema;
  return rest;
}

const OPENAI_UNSUPPORTED = ["allOf", "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties", "unevaluatedProperties", "unevaluatedItems", "propertyNames"];

/** The first of OpenAI's strict-mode rules the schema breaks, worded to follow "OpenAI's strict mode", or null. */
function openAiStrictRule(schema: Schema): string | null {
  if (schema.type !== "object" || "anyOf" in schema) return "needs the top level to be an object schema (type: object, no anyOf)";
  for (const [at, sub] of subschemas(schema, "#")) {
    const keyword = OPENAI_UNSUPPORTED.find((name) => name in sub);
    if (keyword !== undefined) return `does not take ${keyword} (at ${at})`;
    if (!isObjectSchema(sub)) continue;
    if (sub.additionalProperties !== false) return `needs additionalProperties: false on every object (${at} does not set it)`;
    const required = new Set(Array.isArray(sub.required) ? sub.required : []);
    const optional = Object.keys(isRecord(sub.properties) ? sub.properties : {}).find((name) => !required.has(name));
    if (optional !== undefined) return `needs every property listed in required (${at}: '${optional}' is not; make it required and allow null instead)`;
  }
  return null;
}

const ANTHROPIC_UNSUPPORTED = [
  "oneOf", "not", "if", "then", "else", "dependentRequired", "dependentSchemas", "patternProperties", "unevaluatedProperties", "unevaluatedItems", "propertyNames",
  "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
  "maxItems", "uniqueItems", "minContains", "maxContains", "minProperties", "maxProperties",
];

/** The first limit of Anthropic's structured outputs the schema passes, worded to follow "Anthropic's structured outputs", or null. */
function anthropicRule(schema: Schema): string | null {
  for (const [at, sub] of subschemas(schema, "#")) {
    const keyword = ANTHROPIC_UNSUPPORTED.find((name) => name in sub);
    if (keyword !== undefined) return `do not take ${keyword} (at ${at})`;
    if (typeof sub.minItems === "number" && sub.minItems > 1) return `take minItems of 0 or 1 only (at ${at})`;
    if (isObjectSchema(sub) && sub.additionalProperties !== false) return `need additionalProperties: false on every object (${at} does not set it)`;
  }
  return isRecursive(schema) ? "take no recursive schema" : null;
}

function isObjectSchema(sub: Schema): boolean {
  return sub.type === "object" || (Array.isArray(sub.type) && sub.type.includes("object")) || isRecord(sub.properties);
}

const MAP_KEYWORDS = ["properties", "$defs", "definitions", "patternProperties", "dependentSchemas"];
const LIST_KEYWORDS = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];
const ONE_KEYWORDS = ["items", "additionalProperties", "additionalItems", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedProperties", "unevaluatedItems"];

/** Every schema inside `schema`, itself first, with its JSON pointer. */
function* subschemas(schema: Schema, at: string): Generator<[string, Schema]> {
  yield [at, schema];
  for (const [key, value] of Object.entries(schema)) {
    if (MAP_KEYWORDS.includes(key) && isRecord(value)) {
      for (const [name, sub] of Object.entries(value)) if (isRecord(sub)) yield* subschemas(sub, `${at}/${key}/${name}`);
    } else if (LIST_KEYWORDS.includes(key) && Array.isArray(value)) {
      for (const [index, sub] of value.entries()) if (isRecord(sub)) yield* subschemas(sub, `${at}/${key}/${index}`);
    } else if (ONE_KEYWORDS.includes(key) && isRecord(value)) {
      yield* subschemas(value, `${at}/${key}`);
    }
  }
}

/** A `$ref` to the root, or definitions that refer to each other in a circle. */
function isRecursive(schema: Schema): boolean {
  const refsOf = (node: Schema): string[] => [...subschemas(node, "#")].flatMap(([, sub]) => (typeof sub.$ref === "string" ? [sub.$ref] : []));
  const defs = new Map<string, Schema>();
  for (const key of ["$defs", "definitions"]) {
    const group = schema[key];
    if (isRecord(group)) for (const [name, sub] of Object.entries(group)) if (isRecord(sub)) defs.set(`#/${key}/${name}`, sub);
  }
  const defOf = (ref: string): string | undefined => [...defs.keys()].find((key) => ref === key || ref.startsWith(`${key}/`));
  if (refsOf(schema).some((ref) => ref === "#")) return true;
  const visiting = new Set<string>();
  const done = new Set<string>();
  const cyclic = (key: string): boolean => {
    if (done.has(key)) return false;
    if (visiting.has(key)) return true;
    visiting.add(key);
    const found = refsOf(defs.get(key)!).some((ref) => {
      const next = defOf(ref);
      return next !== undefined && cyclic(next);
    });
    visiting.delete(key);
    done.add(key);
    return found;
  };
  return [...defs.keys()].some(cyclic);
}
