// Code generated at build time from a module of src/ (ajv's standalone validators), bundled as a stamped file of dist/ with the runtime helpers it requires, which the engine loads through the code cache.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";
import { bundleCli } from "./bundle.mjs";

/**
 * Writes dist/<name>.cjs from the ES module text `generate(exports, require)` makes of the exports of `source` (a module
 * of src/, compiled and run, so that what the code is generated from is written once, there) and the project's
 * `require`. Returns the files written, as bundleCli does.
 */
export async function writeGeneratedBundle({ name, source, generate, root = process.cwd() }) {
  const require = createRequire(join(root, "package.json"));
  const text = await generate(await sourceModule(root, source, require), require);
  // Named as the build names a file it is still writing (scripts/build.mjs leaves it to this process).
  const temporary = join("dist", `.${name}.${process.pid}.mjs`);
  mkdirSync(join(root, "dist"), { recursive: true });
  writeFileSync(join(root, temporary), text);
  try {
    return await bundleCli(temporary, name, { root });
  } finally {
    rmSync(join(root, temporary), { force: true });
  }
}

/** The exports of `source`, compiled and run with its packages (zod, ajv) required from node_modules. */
async function sourceModule(root, source, require) {
  const result = await build({ absWorkingDir: root, entryPoints: [join(root, source)], bundle: true, format: "cjs", platform: "node", write: false, packages: "external", logLevel: "warning" });
  const module = { exports: {} };
  new Function("module", "exports", "require", result.outputFiles[0].text)(module, module.exports, require);
  return module.exports;
}
