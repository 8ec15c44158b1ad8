// Bundles the two CLIs and their launcher helper into dist/, one CommonJS file each, and writes the JSON Schemas editors read.
import { rmSync } from "node:fs";
import { bundleCli } from "./bundle.mjs";
import { writeJsonSchemas } from "./json-schemas.mjs";

// Start empty: no stale bundle or code cache is left to ship.
rmSync("dist", { recursive: true, force: true });

await Promise.all([
  bundleCli("src/cli/main.ts", "delta"),
  bundleCli("src/sessions/main.ts", "delta-sessions"),
  // The launcher helper is the one file compiled without a cache: small, and it is what reads the cache.
  bundleCli("src/cli/run-bundle.ts", "run-bundle", { stamp: false }),
  writeJsonSchemas(),
]);
