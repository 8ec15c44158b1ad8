// JSON Schemas of agent.yaml, context.yaml and hooks.yaml for editors, generated from the zod schemas the engine validates with.
import { z } from "zod";
import { ContextConfigSchema } from "../context/schema.js";
import { HooksConfigSchema } from "../hooks/schema.js";
import { AgentConfigSchema } from "./schema.js";
import { SCHEMA_KINDS, schemaFileName, type SchemaKind } from "./schema-files.js";

export { SCHEMA_KINDS, schemaFileName };

const SOURCES: Record<SchemaKind, { schema: z.ZodType; title: string }> = {
  agent: { schema: AgentConfigSchema, title: "Delta Engine agent.yaml" },
  context: { schema: ContextConfigSchema, title: "Delta Engine context.yaml" },
  hooks: { schema: HooksConfigSchema, title: "Delta Engine hooks.yaml" },
};

/**
 * What a user writes, so fields with defaults are optional (`io: "input"`). Draft-07, which every
 * YAML language server reads. Checks zod runs in code (a tool has exactly one of exec, shell,
 * command) are not expressible here; the engine still makes them when it loads the agent.
 */
export function jsonSchemaOf(kind: SchemaKind): Record<string, unknown> {
  const { schema, title } = SOURCES[kind];
  const generated = z.toJSONSchema(schema, { io: "input", target: "draft-7", unrepresentable: "any" }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, title, ...rest };
}
