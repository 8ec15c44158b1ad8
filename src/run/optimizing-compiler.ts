// The loop's hold on V8's optimizing compiler, taken through the launcher helper beside the bundle (cli/runtime-flags.ts says why); nothing to hold when this runs from sources.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

type Hold = () => () => void;

let hold: Hold | null | undefined;

/** Holds the optimizing compiler off until the returned release; the helper keeps V8's flags consistent around its compiles. */
export function holdOptimizingCompiler(): () => void {
  hold ??= helperHold();
  return hold === null ? () => {} : hold();
}

/** The helper's hold when this module runs from the bundle (dist/delta.cjs, beside dist/run-bundle.cjs); null from sources, where no launcher set V8's flags. */
function helperHold(): Hold | null {
  const helper = join(dirname(fileURLToPath(import.meta.url)), "run-bundle.cjs");
  if (!existsSync(helper)) return null;
  return (createRequire(import.meta.url)(helper) as { holdOptimizingCompiler: Hold }).holdOptimizingCompiler;
}
