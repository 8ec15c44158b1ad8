// The instruction count's reading of callgrind_annotate: the program's total, less V8's random hash-seed search.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { annotatedInstructions } from "../../bench/lib/instructions.mjs";

// callgrind_annotate 3.19.0 on a one-turn `delta run` (valgrind --tool=callgrind), its first 32 lines as printed.
const ANNOTATED = readFileSync(join(import.meta.dirname, "fixtures/callgrind-annotate.txt"), "utf8");

it("takes the program's total less detail::sprp, V8's search for its hash seed's prime", () => {
  expect(annotatedInstructions(ANNOTATED)).toBe(510_668_759 - 7_578_405);
});

it("counts the whole total when the search does not show", () => {
  const withoutSearch = ANNOTATED.split("\n").filter((line) => !line.includes("detail::sprp")).join("\n");
  expect(annotatedInstructions(withoutSearch)).toBe(510_668_759);
});

it("refuses text without the totals line rather than counting nothing", () => {
  expect(() => annotatedInstructions(ANNOTATED.replace("PROGRAM TOTALS", ""))).toThrow(/PROGRAM TOTALS/);
});
