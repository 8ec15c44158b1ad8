// The engine's own code as the box keeps it read-only: its package and every package a bundle of dist/ requires, with theirs.
import { readFileSync, readdirSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { engineCodeFolders, enginePackage } from "../../../src/process/sandbox/engine-code.js";

/** The packages dist/*.cjs require by name: `require("ajv/dist/runtime/equal")` → ajv. */
function packagesTheBundlesRequire(): string[] {
  const dist = path.join(enginePackage(), "dist");
  const names = new Set<string>();
  for (const file of readdirSync(dist).filter((name) => name.endsWith(".cjs"))) {
    for (const [, specifier] of readFileSync(path.join(dist, file), "utf8").matchAll(/\brequire\("([^".][^"]*)"\)/g)) {
      if (specifier === undefined || isBuiltin(specifier)) continue;
      const parts = specifier.split("/");
      names.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
    }
  }
  return [...names].sort();
}

describe("the engine's code", () => {
  it("holds the package of every module a bundle requires at run time, and the packages those depend on", () => {
    const required = packagesTheBundlesRequire();
    expect(required).toContain("gpt-tokenizer");
    const folders = engineCodeFolders();
    expect(folders[0]).toBe(enginePackage());
    for (const name of required) expect(folders.some((folder) => folder.endsWith(`${path.sep}node_modules${path.sep}${name}`)), name).toBe(true);
    // ajv's runtime requires fast-deep-equal and fast-uri: a dependency's dependencies are the engine's code too.
    for (const name of ["fast-deep-equal", "fast-uri"]) expect(folders.some((folder) => folder.endsWith(`${path.sep}${name}`)), name).toBe(true);
  });
});
