// Bundles the two CLIs into dist/ so start-up loads a few files instead of hundreds of modules.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { build } from "esbuild";

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

// Chunk names carry content hashes: start empty so no stale chunk is left to ship.
rmSync("dist", { recursive: true, force: true });

await build({
  entryPoints: { delta: "src/cli/main.ts", "delta-sessions": "src/sessions/main.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // Less source to parse at every start; names kept so errors still print as ConfigError etc.
  minify: true,
  keepNames: true,
  sourcemap: "linked",
  logLevel: "warning",
  chunkNames: "chunks/[name]-[hash]",
  plugins: [zodEnglishOnly],
  // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
