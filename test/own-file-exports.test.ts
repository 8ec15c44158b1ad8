// House rule: no export is used only by its own file. A name another file never mentions (src, tests, bench, scripts, bin) is kept private to its module.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

function filesUnder(dir: string, pattern: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : filesUnder(path, pattern);
    return pattern.test(path) ? [path] : [];
  });
}

describe("exports", () => {
  it("every exported name of src/ is used by some other file", () => {
    const sources = filesUnder("src", /\.ts$/);
    const readers = [...sources, ...filesUnder("test", /\.(ts|mjs|js)$/), ...filesUnder("bench", /\.(ts|mjs|js)$/), ...filesUnder("scripts", /\.(ts|mts|mjs|js)$/), ...filesUnder("bin", /\.(mjs|js)$/)];
    const text = new Map(readers.map((file) => [file, readFileSync(file, "utf8")]));
    const ownFileOnly: string[] = [];
    for (const file of sources) {
      const path = relative(".", file).split("\\").join("/");
      for (const match of text.get(file)!.matchAll(/^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:const|let|function\*?|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm)) {
        const word = new RegExp(`\\b${match[1]!.replace(/\$/g, "\\$")}\\b`);
        if (!readers.some((other) => other !== file && word.test(text.get(other)!))) ownFileOnly.push(`${path}: ${match[1]}`);
      }
    }
    expect(ownFileOnly).toEqual([]);
  });
});
