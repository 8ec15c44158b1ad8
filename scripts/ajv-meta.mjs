// Generates the meta-schema checks of src/agent/ajv-meta.ts as standalone code at build time: compiling the 2020-12 meta-schema costs a run 100–250 ms, loading its code a few.
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

const SOURCE = join("src", "agent", "ajv-meta.ts");

/**
 * An esbuild plugin for the ajv bundle: `./ajv-meta.js` imported from src/agent/ becomes a module whose
 * metaValidator(draft) returns a validator that ajv's standalone code generated from the meta-schemas and
 * options the source module names (META_SCHEMA_IDS, META_OPTIONS, read by running that module).
 */
export const ajvMetaPrecompiled = {
  name: "ajv-meta-precompiled",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/ajv-meta\.js$/ }, (args) => (args.resolveDir.endsWith(join("src", "agent")) ? { path: "ajv-meta", namespace: "ajv-meta-precompiled" } : undefined));
    pluginBuild.onLoad({ filter: /.*/, namespace: "ajv-meta-precompiled" }, async () => ({ contents: await precompiledModule(), resolveDir: process.cwd(), loader: "js" }));
  },
};

async function precompiledModule() {
  const require = createRequire(join(process.cwd(), "package.json"));
  const { META_SCHEMA_IDS, META_OPTIONS } = await sourceModule(require);
  const { default: Ajv } = require("ajv");
  const { default: Ajv2020 } = require("ajv/dist/2020");
  const { default: standaloneCode } = require("ajv/dist/standalone");
  const validators = Object.entries(META_SCHEMA_IDS).map(([draft, id]) => {
    const ajv = new (draft === "2020-12" ? Ajv2020 : Ajv)({ ...META_OPTIONS, code: { source: true } });
    // Each draft's code in a scope of its own: both declare the same helper names.
    return `${JSON.stringify(draft)}: (() => { const module = { exports: {} }; const exports = module.exports;\n${standaloneCode(ajv, { check: id })}\nreturn module.exports.check; })()`;
  });
  return `const validators = {\n${validators.join(",\n")}\n};\nexports.metaValidator = (draft) => validators[draft];\n`;
}

/** The exports of src/agent/ajv-meta.ts, compiled and run: the constants are written once, there. */
async function sourceModule(require) {
  const result = await build({ entryPoints: [SOURCE], bundle: true, format: "cjs", platform: "node", write: false, packages: "external", logLevel: "warning" });
  const module = { exports: {} };
  new Function("module", "exports", "require", result.outputFiles[0].text)(module, module.exports, require);
  return module.exports;
}
