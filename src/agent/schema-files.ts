// The YAML files of an agent package that have a JSON Schema, and the name each schema ships under in schemas/.
export const SCHEMA_KINDS = ["agent", "context", "hooks"] as const;
export type SchemaKind = (typeof SCHEMA_KINDS)[number];

export function schemaFileName(kind: SchemaKind): string {
  return `${kind}.schema.json`;
}

/** The first line of a YAML file that points editors (yaml-language-server) at its schema. */
export const SCHEMA_MODELINE = /^# yaml-language-server: \$schema=(\S+)$/;

export function schemaModeline(schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}`;
}
