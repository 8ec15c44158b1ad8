// Writes schemas/<kind>.schema.json from the zod schemas, so editors check the YAML the engine reads (src/agent/json-schemas.ts) and pipelines the RunResult it prints (src/run/run-result.ts).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { writeInPlace } from "./write-in-place.mjs";

/** The file pipelines validate `--format json`'s stdout (and stream-json's last line) against. */
const RUN_RESULT_FILE = "run-result.schema.json";

export async function writeJsonSchemas(root = process.cwd()) {
  const generator = join(root, "dist", `.json-schemas.${process.pid}.mjs`);
  await build({
    absWorkingDir: root,
    // One zod for both: toJSONSchema reads the schemas' own metadata.
    stdin: {
      contents: 'export * from "./src/agent/json-schemas.ts"; export { RunResultSchema } from "./src/run/run-result.ts"; export { z } from "zod";',
      resolveDir: root,
      loader: "ts",
    },
    outfile: generator,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
  try {
    const { SCHEMA_KINDS, jsonSchemaOf, schemaFileName, RunResultSchema, z } = await import(pathToFileURL(generator).href);
    const dir = join(root, "schemas");
    for (const kind of SCHEMA_KINDS) writeInPlace(join(dir, schemaFileName(kind)), `${JSON.stringify(jsonSchemaOf(kind), null, 2)}\n`);
    // What the engine prints, so every field as it is output; draft-07, as the YAML files' schemas.
    const { $schema, ...runResult } = z.toJSONSchema(RunResultSchema, { io: "output", target: "draft-7", unrepresentable: "any" });
    writeInPlace(join(dir, RUN_RESULT_FILE), `${JSON.stringify({ $schema, title: "Delta Engine RunResult v2.0", ...runResult }, null, 2)}\n`);
  } finally {
    rmSync(generator, { force: true });
  }
}
