// Writes schemas/<kind>.schema.json from the zod schemas (src/agent/json-schemas.ts), so editors check the YAML the engine reads.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { writeInPlace } from "./write-in-place.mjs";

export async function writeJsonSchemas(root = process.cwd()) {
  const generator = join(root, "dist", `.json-schemas.${process.pid}.mjs`);
  await build({
    absWorkingDir: root,
    entryPoints: [join(root, "src/agent/json-schemas.ts")],
    outfile: generator,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
  try {
    const { SCHEMA_KINDS, jsonSchemaOf, schemaFileName } = await import(pathToFileURL(generator).href);
    const dir = join(root, "schemas");
    for (const kind of SCHEMA_KINDS) writeInPlace(join(dir, schemaFileName(kind)), `${JSON.stringify(jsonSchemaOf(kind), null, 2)}\n`);
  } finally {
    rmSync(generator, { force: true });
  }
}
