// Bundles one CLI into a single stamped CommonJS file in dist/, which bin/ runs through the V8 code cache.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { build } from "esbuild";

/** Keep in step with BUILD_STAMP_PREFIX in src/cli/run-bundle.ts. */
const STAMP_PREFIX = "//# delta-build=";
const STAMP_PLACEHOLDER = "0".repeat(64);

const zodLocales = join(dirname(createRequire(import.meta.url).resolve("zod")), "v4", "locales");

/**
 * zod re-exports every one of its ~50 message locales through `z.locales`, which puts them all in
 * the bundle and makes each start-up parse them. The engine speaks English only: keep `en`.
 */
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join("node_modules", "zod")}`) ? { path: "zod-locales", namespace: "zod-english-only" } : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: "zod-english-only" }, () => ({
      contents: `export { default as en } from ${JSON.stringify(join(zodLocales, "en.js"))};`,
      resolveDir: zodLocales,
    }));
  },
};

/**
 * The MCP SDK is its own bundle (dist/delta-mcp-sdk.cjs, from src/tools/mcp/sdk.ts): inside the
 * delta bundle its ~150 modules, though never run, would still be set up and cached at every start.
 * This plugin puts in its place a module that loads that bundle, through the code cache, when an
 * MCP module is first initialized — only for agents with MCP servers.
 */
export const MCP_SDK_ENTRY = "src/tools/mcp/sdk.ts";
export const MCP_SDK_BUNDLE = "delta-mcp-sdk";
const mcpSdkApart = {
  name: "mcp-sdk-apart",
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /^\.\/sdk\.js$/ }, (args) =>
      args.resolveDir.endsWith(join("src", "tools", "mcp")) ? { path: MCP_SDK_BUNDLE, namespace: "mcp-sdk-apart" } : undefined,
    );
    pluginBuild.onLoad({ filter: /.*/, namespace: "mcp-sdk-apart" }, () => ({
      // Both paths are computed, so esbuild leaves the requires to run time; __dirname is dist/.
      contents: `const { join } = require("node:path");
        module.exports = require(join(__dirname, "run-bundle.cjs")).requireBundle(join(__dirname, "${MCP_SDK_BUNDLE}.cjs"));`,
      loader: "js",
    }));
  },
};

/**
 * Writes `<root>/dist/<name>.cjs` (and its source map) from `entry`, a path relative to `root`. The first line is a stamp with the
 * SHA-256 of the file, which keys the code cache: a rebuilt bundle never meets an old cache.
 * `inject`: modules whose exports replace the globals of the same names throughout the bundle.
 */
export async function bundleCli(entry, name, { stamp = true, root = process.cwd(), inject = [], sdkApart = false } = {}) {
  const outfile = join(root, "dist", `${name}.cjs`);
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // Less source to compile on a cold start; names kept so errors still print as ConfigError etc.
    minify: true,
    keepNames: true,
    sourcemap: "linked",
    logLevel: "warning",
    write: false,
    plugins: [zodEnglishOnly, ...(sdkApart ? [mcpSdkApart] : [])],
    // The tokenizer's encodings are megabytes of tables that only runs near a token limit need:
    // left in node_modules and required on first use, they cost other runs nothing at start-up.
    // ajv likewise: only runs with an output schema require it, from node_modules, when the schema is compiled.
    external: ["gpt-tokenizer", "gpt-tokenizer/*", "ajv", "ajv/*"],
    inject: inject.map((file) => join(root, file)),
    define: { "import.meta.url": "__import_meta_url" },
    // A CommonJS bundle loads lazily with require(): a real import() would need an ESM loader that bin/ does not give the script.
    supported: { "dynamic-import": false },
    banner: {
      js: [
        ...(stamp ? [`${STAMP_PREFIX}${STAMP_PLACEHOLDER}`] : []),
        'var __import_meta_url = require("node:url").pathToFileURL(__filename).href;',
      ].join("\n"),
    },
  });
  mkdirSync(join(root, "dist"), { recursive: true });
  for (const file of result.outputFiles) {
    let text = file.text;
    if (file.path.endsWith(".cjs") && stamp) {
      const hash = createHash("sha256").update(text).digest("hex");
      text = text.replace(`${STAMP_PREFIX}${STAMP_PLACEHOLDER}`, `${STAMP_PREFIX}${hash}`);
    }
    writeFileSync(file.path, text);
  }
}
