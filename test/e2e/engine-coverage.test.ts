// A delta process measured for coverage (NODE_V8_COVERAGE, as npm run coverage sets it) reports its bundle's coverage block by
// block, at the offsets of the file as built, so c8 can map it to src/ through dist/*.map.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { REPO, delta, setUpE2e } from "./harness.js";

interface ScriptCoverage {
  url: string;
  functions: { functionName: string; isBlockCoverage: boolean; ranges: { startOffset: number; count: number }[] }[];
}

const { root } = setUpE2e("delta-engine-coverage-");

it("is block coverage of dist/delta.cjs at the offsets of the file as written, uncalled functions counted 0", async () => {
  const written = join(root, "v8-coverage");
  const run = await delta(["--version"], { env: { NODE_V8_COVERAGE: written } });
  expect(run.exitCode, run.stderr).toBe(0);

  const bundle = join(REPO, "dist", "delta.cjs");
  const scripts = readdirSync(written).flatMap((name) => (JSON.parse(readFileSync(join(written, name), "utf8")) as { result: ScriptCoverage[] }).result);
  const script = scripts.find((entry) => entry.url === pathToFileURL(bundle).href);
  if (script === undefined) throw new Error(`no coverage of ${bundle} among ${scripts.length} scripts`);

  // A function's range starts where its declaration stands in the file: shifted by a wrapper, none would. (A function
  // expression's name is inferred from where it is assigned, so only functions written with a name are compared.)
  const source = readFileSync(bundle, "utf8");
  const declared = script.functions.filter(({ functionName, ranges }) => functionName !== "" && /^(async )?function\*? ?[\w$]+\(/.test(source.slice(ranges[0]!.startOffset, ranges[0]!.startOffset + 64)));
  expect(declared.length).toBeGreaterThan(500);
  for (const { functionName, ranges } of declared) expect(source.slice(ranges[0]!.startOffset)).toMatch(new RegExp(`^(async )?function\\*? ?${functionName.replace(/\$/g, "\\$")}\\(`));
  // Code compiled from source, not from the code cache: block coverage, and the functions --version never calls are there with 0.
  expect(script.functions.some((fn) => fn.isBlockCoverage)).toBe(true);
  expect(script.functions.filter((fn) => fn.ranges[0]!.count === 0).length).toBeGreaterThan(1000);
});
