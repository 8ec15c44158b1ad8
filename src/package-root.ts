// The delta-engine package's folder, found from this module's own file: from src/ (tests) as from dist/ (the bundle).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The nearest folder above this module that holds package.json and `part` (a path inside the package), or undefined. */
export function packageRootHolding(part: string): string | undefined {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json")) && existsSync(path.join(dir, part))) return dir;
    if (path.dirname(dir) === dir) return undefined;
  }
}
