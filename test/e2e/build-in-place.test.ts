// The build replaces dist/ file by file and never empties it: a `delta` started while `npm install -g .` rebuilds the clone runs (it failed with ENOENT).
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import { beforeAll, expect, it } from "vitest";
import { pauseGate } from "../support/pause-points.js";
import { REPO, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-build-in-place-");
const clone = join(root, "clone");
beforeAll(() => {
  // A built clone: what the build reads and what it had written before.
  for (const entry of ["package.json", "tsconfig.json", "src", "scripts", "bin", "templates", "dist"]) {
    cpSync(join(REPO, entry), join(clone, entry), { recursive: true, filter: (source) => !source.includes(`${join("dist", ".cache")}`) });
  }
  symlinkSync(join(REPO, "node_modules"), join(clone, "node_modules"));
});

it("a delta started mid-build, with some bundles replaced and delta.cjs not yet, runs; what the build no longer writes is gone after", async () => {
  writeFileSync(join(clone, "dist", "old-bundle.cjs"), "// a bundle an older build wrote\n");
  mkdirSync(join(clone, "dist", ".cache"), { recursive: true });
  writeFileSync(join(clone, "dist", ".cache", "delta-0000000000000000-v20.0.0-x64.v8"), "stale");
  const gate = pauseGate("build-write:delta.cjs", root);
  const build = execa(process.execPath, ["scripts/build.mjs"], { cwd: clone, env: gate.env, reject: false });
  try {
    await gate.reached(1, 120_000);
    expect(existsSync(join(clone, "dist", `delta.cjs.${build.pid}.tmp`))).toBe(true);
    const during = await execa(process.execPath, [join(clone, "bin", "delta.js"), "--version"], { reject: false });
    expect(during.exitCode, during.stderr).toBe(0);
    expect(during.stdout).toMatch(/^delta\/\d+\.\d+\.\d+/);
    const expand = await execa(process.execPath, [join(clone, "bin", "delta.js"), "tool", "list", join(clone, "templates", "minimal")], { reject: false });
    expect(expand.exitCode, expand.stderr).toBe(0);
  } finally {
    gate.open();
  }
  const built = await build;
  expect(built.exitCode, built.stderr).toBe(0);
  const dist = readdirSync(join(clone, "dist"));
  expect(dist).toEqual(expect.arrayContaining(["delta.cjs", "run-bundle.cjs", "delta-sessions.cjs", "delta-mcp-sdk.cjs"]));
  expect(dist.filter((name) => name.endsWith(".tmp") || name === "old-bundle.cjs")).toEqual([]);
  expect(readdirSync(join(clone, "dist", ".cache"))).toEqual([]);
  const after = await execa(process.execPath, [join(clone, "bin", "delta.js"), "--version"], { reject: false });
  expect(after.exitCode, after.stderr).toBe(0);
}, 180_000);
