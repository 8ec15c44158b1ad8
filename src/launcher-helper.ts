// The launcher helper (dist/run-bundle.cjs) beside the bundle this code runs in: other bundles loaded through its code cache, the V8 flags a run's loop holds, and what the cache should cover; none when this runs from sources.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** What cli/run-bundle.ts exports to the bundles it runs (the one instance bin/delta.js loaded, from Node's module cache). */
interface LauncherHelper {
  requireBundle(bundlePath: string): unknown;
  holdLoopFlags(): () => void;
  ranCodePath(name: string): void;
}

let helper: LauncherHelper | null | undefined;

/** The helper beside this bundle (dist/), or null from sources, where no launcher started the process. */
export function launcherHelper(): LauncherHelper | null {
  if (helper === undefined) {
    const file = join(dirname(fileURLToPath(import.meta.url)), "run-bundle.cjs");
    helper = existsSync(file) ? (createRequire(import.meta.url)(file) as LauncherHelper) : null;
  }
  return helper;
}
