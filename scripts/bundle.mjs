// Bundles one CLI into a single stamped CommonJS file in dist/, which bin/ runs through the V8 code cache; libraries only some runs need go in bundles of their own.
import { createHash } from "node:crypto";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { build } from "esbuild";
import { writeInPlace } from "./write-in-place.mjs";

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
 * A library only some runs need is a bundle of its own, loaded by the delta bundle through the code
 * cache on first use: inside the delta bundle its modules, though never run, would still be set up
 * and cached at every start. `specifier` imported from `dir` (a folder of src/) is replaced by a
 * module that loads `dist/<bundle>.cjs` when it is first initialized.
 */
function apart({ dir, specifier, bundle }) {
  return {
    name: `${bundle}-apart`,
    setup(pluginBuild) {
      const filter = new RegExp(`^${specifier.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`);
      pluginBuild.onResolve({ filter }, (args) => (args.resolveDir.endsWith(dir) ? { path: bundle, namespace: `${bundle}-apart` } : undefined));
      pluginBuild.onLoad({ filter: /.*/, namespace: `${bundle}-apart` }, () => ({
        // Both paths are computed, so esbuild leaves the requires to run time; __dirname is dist/.
        contents: `const { join } = require("node:path");
          module.exports = require(join(__dirname, "run-bundle.cjs")).requireBundle(join(__dirname, "${bundle}.cjs"));`,
        loader: "js",
      }));
    },
  };
}

/** The MCP SDK (src/tools/mcp/sdk.ts): ~150 modules, only for agents with MCP servers. */
export const MCP_SDK_ENTRY = "src/tools/mcp/sdk.ts";
export const MCP_SDK_BUNDLE = "delta-mcp-sdk";
/** ajv (src/agent/ajv.ts): only for runs with an output schema. */
export const AJV_ENTRY = "src/agent/ajv.ts";
export const AJV_BUNDLE = "delta-ajv";
/** The MCP SDK's server half (src/serve/sdk.ts): only for `delta mcp serve`. */
export const MCP_SERVER_SDK_ENTRY = "src/serve/sdk.ts";
export const MCP_SERVER_SDK_BUNDLE = "delta-mcp-server-sdk";
/** The OpenTelemetry SDK and OTLP exporters (src/trace/otel-sdk.ts): only when spans are exported. */
export const OTEL_SDK_ENTRY = "src/trace/otel-sdk.ts";
export const OTEL_SDK_BUNDLE = "delta-otel-sdk";
const otelSdkApart = apart({ dir: join("src", "trace"), specifier: "./otel-sdk.js", bundle: OTEL_SDK_BUNDLE });
const mcpSdkApart = apart({ dir: join("src", "tools", "mcp"), specifier: "./sdk.js", bundle: MCP_SDK_BUNDLE });
const mcpServerSdkApart = apart({ dir: join("src", "serve"), specifier: "./sdk.js", bundle: MCP_SERVER_SDK_BUNDLE });
const ajvApart = apart({ dir: join("src", "agent"), specifier: "./ajv.js", bundle: AJV_BUNDLE });
/** The append's checks of the journal's events, generated at build time (scripts/journal-checks.mjs): every run loads them. */
export const JOURNAL_CHECKS_BUNDLE = "delta-journal-checks";
const journalChecksApart = apart({ dir: join("src", "journal"), specifier: "./event-checks.js", bundle: JOURNAL_CHECKS_BUNDLE });

/**
 * Writes `<root>/dist/<name>.cjs` (and its source map) from `entry`, a path relative to `root`, each file whole (a
 * running `delta` never reads half of one), and returns their paths. The first line is a stamp with the SHA-256 of the
 * file, which keys the code cache: a rebuilt bundle never meets an old cache.
 * `inject`: modules whose exports replace the globals of the same names throughout the bundle.
 * `keepNames`: false for a bundle whose own code never reads a class's or function's name but for errors (errors.ts keepClassNames).
 */
export async function bundleCli(entry, name, { stamp = true, root = process.cwd(), inject = [], sdkApart = false, keepNames = true } = {}) {
  const outfile = join(root, "dist", `${name}.cjs`);
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, entry)],
    outfile,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    // Less source to compile on a cold start. keepNames gives minified classes and functions their names back with a
    // __name() call at each one's creation, closures included: the engine's own bundles go without it (0.28 M instructions
    // an iteration and 34 M at start-up, callgrind), their error classes named by errors.ts; the SDKs' bundles keep it.
    minify: true,
    keepNames,
    sourcemap: "linked",
    logLevel: "warning",
    write: false,
    plugins: [zodEnglishOnly, ...(sdkApart ? [mcpSdkApart, mcpServerSdkApart, ajvApart, otelSdkApart, journalChecksApart] : [])],
    // The tokenizer's encodings are megabytes of tables that only runs near a token limit need:
    // left in node_modules and required on first use, they cost other runs nothing at start-up.
    external: ["gpt-tokenizer", "gpt-tokenizer/*"],
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
  for (const file of result.outputFiles) {
    let text = file.text;
    if (file.path.endsWith(".cjs") && stamp) {
      const hash = createHash("sha256").update(text).digest("hex");
      text = text.replace(`${STAMP_PREFIX}${STAMP_PLACEHOLDER}`, `${STAMP_PREFIX}${hash}`);
    }
    writeInPlace(file.path, text);
  }
  return result.outputFiles.map((file) => file.path);
}
