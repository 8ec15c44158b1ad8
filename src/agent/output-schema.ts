// The output schema a run's final answer must meet: agent.yaml's output_schema (inline, or a file inside the agent home) or --output-schema FILE, checked and made self-contained at load.
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { OutputFormat } from "../conversation.js";
import { ConfigError } from "../errors.js";
import { compileJsonSchema, JSON_SCHEMA_DRAFTS, type JsonSchemaDraft, type SchemaValidator } from "./json-schema-compile.js";
import { displayPath } from "./imports.js";
import { bundleSchemaRefs, type SchemaOrigin } from "./schema-refs.js";
import { readYamlFile } from "./yaml-file.js";

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
  const real = await realFile(target, `${configDisplay}: output_schema: '${value}' not found (looked for ${target}); give a schema file relative to the agent directory, or write the schema inline`);
  const relative = path.relative(home, real);
  if (relative.startsWith("..") || path.isAbsolute(relative)) {
    throw new ConfigError(`${configDisplay}: output_schema: '${value}' resolves to ${real}, outside the agent directory ${home}; copy the schema into the agent directory (symlinks are resolved)`);
  }
  return loadSchemaFile(real, displayPath(home, real), home);
}

/** `--output-schema FILE`: a schema for one run, from anywhere; what it refers to must still be inside the agent home. */
export async function loadOutputSchemaFile(file: string, home: string): Promise<StructuredOutput> {
  const absolute = path.resolve(file);
  const real = await realFile(absolute, `--output-schema: ${absolute} not found; give the path of a JSON Schema file (JSON or YAML)`);
  return loadSchemaFile(real, file, home);
}

/** The journaled schema of a run, compiled again for this process. */
export async function compileOutputSchema(schema: OutputSchema): Promise<StructuredOutput> {
  return { schema, validate: await compileJsonSchema(schema.schema, schema.draft, schema.source) };
}

async function loadSchemaFile(real: string, display: string, home: string): Promise<StructuredOutput> {
  const file = await readYamlFile(real, display);
  return prepare(file.data as Record<string, unknown>, { display, field: [], baseDir: path.dirname(real) }, home, display);
}

async function prepare(schema: Record<string, unknown>, origin: SchemaOrigin, home: string, source: string): Promise<StructuredOutput> {
  const draft = draftOf(schema.$schema, source);
  const bundled = await bundleSchemaRefs(schema, origin, home, draft === "draft-07" ? "definitions" : "$defs");
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

async function realFile(target: string, missing: string): Promise<string> {
  try {
    const real = await realpath(target);
    if ((await stat(real)).isFile()) return real;
  } catch {
    // Reported below.
  }
  throw new ConfigError(missing);
}
