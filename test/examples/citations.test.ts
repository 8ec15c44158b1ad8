// What users read (README, docs, examples, the delta init templates) cites only what this repository holds: no design section numbers, ADRs or design versions.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect, it } from "vitest";
import { REPO } from "../e2e/harness.js";

const READ_BY_USERS = ["README.md", "docs", "examples", "templates", "bench/README.md"];
const TEXT = /\.(md|ya?ml|sh|sbatch|mjs|js)$/;
/** "design 2.4.4", "spec 2.2", "ADR-003", "the v1.1 form", "(v1.6+)": references to a document users do not have. */
const CITATION = /\b(design|spec)\s+(ADR-)?\d+(\.\d+)+|\bADR-\d+|\bv1\.\d+\+?\s+(form|design)\b|\(v1\.\d+\+?\)/i;

function textFiles(path: string): string[] {
  if (statSync(path).isFile()) return TEXT.test(path) ? [path] : [];
  return readdirSync(path).filter((name) => name !== "workspaces" && name !== "node_modules" && !name.startsWith(".")).flatMap((name) => textFiles(join(path, name)));
}

it("no user-facing file cites a design section, an ADR or a design version", () => {
  const found = READ_BY_USERS.flatMap((entry) => textFiles(join(REPO, entry))).flatMap((file) =>
    readFileSync(file, "utf8").split("\n").flatMap((line, index) => (CITATION.test(line) ? [`${relative(REPO, file)}:${index + 1}: ${line.trim()}`] : [])),
  );
  expect(found).toEqual([]);
});
