// `delta schema <agent|context|hooks>`: prints the JSON Schema that editors use to complete and check that YAML file.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_KINDS, schemaFileName, type SchemaKind } from "../../agent/schema-files.js";
import { didYouMean } from "../../did-you-mean.js";
import { UsageError } from "../../errors.js";
import type { CliIo } from "../io.js";
import { packageFolder } from "../package-dir.js";

/** Reads the file the build generated and the package ships, so printing a schema does not load the generator. */
export async function schemaCommand(name: string | undefined, io: CliIo): Promise<number> {
  if (name === undefined) {
    // Which schemas there are is the answer to a bare `delta schema`.
    io.out(`Usage: delta schema <agent|context|hooks>\n\n${SCHEMA_KINDS.map((known) => `  ${known.padEnd(8)} ${known}.yaml`).join("\n")}\n`);
    return 0;
  }
  const kind = SCHEMA_KINDS.find((known) => known === name.replace(/\.ya?ml$/, ""));
  if (!kind) throw new UsageError(`Unknown schema '${name}'.${didYouMean(name.replace(/\.ya?ml$/, ""), SCHEMA_KINDS)} Use: delta schema agent | context | hooks`);
  io.data(readFileSync(schemaPath(kind), "utf8"));
  return 0;
}

export function schemaPath(kind: SchemaKind): string {
  return join(packageFolder("schemas"), schemaFileName(kind));
}
