// The launcher helper's require for a bundle: a built-in module Node still has to compile loads under V8's default flags; one it already holds comes as it is, with no change of flags.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";

const compiles = vi.hoisted(() => ({ count: 0 }));
vi.mock("../../src/cli/runtime-flags.js", async (original) => {
  const real = await original<typeof import("../../src/cli/runtime-flags.js")>();
  return {
    ...real,
    withDefaultFlags: <T>(compile: () => T): T => {
      compiles.count += 1;
      return real.withDefaultFlags(compile);
    },
  };
});

const dirs: string[] = [];
afterEach(() => {
  vi.unstubAllEnvs();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it("changes V8's flags for a built-in module's first load through the helper, never for the same module again", async () => {
  // Under coverage the helper hands bundles to Node's own loader.
  vi.stubEnv("NODE_V8_COVERAGE", undefined);
  const { requireBundle } = await import("../../src/cli/run-bundle.js");
  const dir = mkdtempSync(join(tmpdir(), "delta-run-bundle-"));
  dirs.push(dir);
  const bundle = join(dir, "bundle.cjs");
  // No build stamp: no code cache to read or write, only the compile of the script itself.
  writeFileSync(bundle, 'const a = require("node:fs"); const b = require("node:fs"); const c = require("node:path"); module.exports = { same: a === b, sep: c.sep };\n');
  compiles.count = 0;
  expect(requireBundle(bundle)).toEqual({ same: true, sep: "/" });
  // The script's compile, node:fs's first load and node:path's: node:fs again is Node's cached module.
  expect(compiles.count).toBe(3);
  writeFileSync(join(dir, "again.cjs"), 'module.exports = require("node:fs") === require("fs") ? 2 : 1;\n');
  compiles.count = 0;
  requireBundle(join(dir, "again.cjs"));
  // The script's compile, and `fs` (another name of the same module, loaded once more through the helper under its name).
  expect(compiles.count).toBe(2);
});
