// The output schema a run's final answer must meet: agent.yaml's output_schema (inline, or a file inside the agent home) or --output-schema FILE, checked and made self-contained at load.
import { realpath } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { OutputFormat } from "../conversation.js";
import { ConfigError } from "../errors.js";
import { compileJsonSchema, JSON_SCHEMA_DRAFTS, type JsonSchemaDraft, type SchemaValidator } from "./json-schema-compile.js";
import { displayPath } from "./imports.js";
import { bundleSchemaRefs, type SchemaOrigin } from "./schema-refs.js";
import { readSchemaFile } from "./schema-file.js";

/** A checked, self-contained schema as ENGINE_START journals it, so `continue` holds the run to the schema it started with. */
export const OutputSchemaSchema = z.object({
  /** Where it came from, as messages name it: "agent.yaml: output_schema", "schemas/verdict.json", a --output-schema path. */
  source: z.string(),
  draft: z.enum(JSON_SCHEMA_DRAFTS),
  schema: z.record(z.string(), z.unknown()),
});
type OutputSchema = z.infer<typeof OutputSchemaSchema>;

export interface StructuredOutput {
  schema: OutputSchema;
  validate: SchemaValidator;
  /** What the run's protocol is sent to ask for it natively (run/output-choice.ts); none until a provider is chosen. */
  format?: OutputFormat | null;
}

const DRAFTS: Record<string, JsonSchemaDraft> = {
  "https://json-schema.org/draft/2020-12/schema": "2020-12",
  "http://json-schema.org/draft-07/schema": "draft-07",
  "https://json-schema.org/draft-07/schema": "draft-07",
};

/** agent.yaml's `output_schema`: a mapping is the schema itself; a string names a schema file inside the agent home. */
export async function loadAgentOutputSchema(home: string, configDisplay: string, value: string | Record<string, unknown>): Promise<StructuredOutput> {
  if (typeof value !== "string") {
    return prepare(value, { display: configDisplay, field: ["output_schema"], baseDir: home }, home, `${configDisplay}: output_schema`);
  }
  const target = path.resolve(home, value);
  const missing = `${configDisplay}: output_schema: '${value}' not found (looked for ${target}); give a schema file relative to the agent directory, or write the schema inline`;
  const real = await realPath(target, missing);
  const relative = path.relative(home, real);
  if (relative.startsWith("..") || path.isAbsolute(relative)) {
    throw new ConfigError(`${configDisplay}: output_schema: '${value}' resolves to ${real}, outside the agent directory ${home}; copy the schema into the agent directory (symlinks are resolved)`);
  }
  return loadSchemaFile({ path: target, folder: home, display: displayPath(home, real), namedAt: `${configDisplay}: output_schema`, missing }, real, home);
}

/** `--output-schema FILE`: a schema for one run, from anywhere; what it refers to must still be inside the agent home. */
export async function loadOutputSchemaFile(file: string, home: string): Promise<StructuredOutput> {
  const absolute = path.resolve(file);
  const missing = `--output-schema: ${absolute} not found; give the path of a JSON Schema file (JSON or YAML)`;
  const real = await realPath(absolute, missing);
  return loadSchemaFile({ path: absolute, folder: null, display: file, namedAt: "--output-schema", missing }, real, home);
}

/** The journaled schema of a run, compiled again for this process. */
export async function compileOutputSchema(schema: OutputSchema): Promise<StructuredOutput> {
  return { schema, validate: await compileJsonSchema(schema.schema, schema.draft, schema.source) };
}

/** `real`: where the file is once links are resolved; the files it refers to are named relative to it. */
async function loadSchemaFile(place: Parameters<typeof readSchemaFile>[0], real: string, home: string): Promise<StructuredOutput> {
  const { data, bytes } = readSchemaFile(place);
  return prepare(data as Record<string, unknown>, { display: place.display, field: [], baseDir: path.dirname(real) }, home, place.display, bytes);
}

/** `bytes`: what the schema's own file took of the bound on all its files (0 inline). */
async function prepare(schema: Record<string, unknown>, origin: SchemaOrigin, home: string, source: string, bytes = 0): Promise<StructuredOutput> {
  const draft = draftOf(schema.$schema, source);
  const bundled = await bundleSchemaRefs(schema, origin, home, draft === "draft-07" ? "definitions" : "$defs", bytes);
  return compileOutputSchema({ source, draft, schema: bundled });
}

/** Draft 2020-12 unless `$schema` names draft-07. */
function draftOf(declared: unknown, source: string): JsonSchemaDraft {
  if (declared === undefined) return "2020-12";
  const draft = typeof declared === "string" ? DRAFTS[declared.replace(/#$/, "")] : undefined;
  if (draft === undefined) {
    throw new ConfigError(`${source}: $schema: ${JSON.stringify(declared)} is not a draft the engine reads; use "https://json-schema.org/draft/2020-12/schema" or "http://json-schema.org/draft-07/schema#" (or leave $schema out for 2020-12)`);
  }
  return draft;
}

/** The path with its links resolved; a missing file is the refusal given. Whether it is a file to read is the safe open's to say. */
async function realPath(target: string, missing: string): Promise<string> {
  try {
    return await realpath(target);
  } catch (err) {
    throw new ConfigError(missing, { cause: err });
  }
}
