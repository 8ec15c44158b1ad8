// Bundles the two CLIs into dist/ so start-up loads a few files instead of hundreds of modules.
import { build } from "esbuild";

await build({
  entryPoints: { delta: "src/cli/main.ts", "delta-sessions": "src/sessions/main.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  logLevel: "warning",
  chunkNames: "chunks/[name]-[hash]",
  // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
