// Finds a folder shipped with the delta-engine package (templates/, schemas/), from src/ (tests) as from dist/ (the bundle).
import path from "node:path";
import { UsageError } from "../errors.js";
import { packageRootHolding } from "../package-root.js";

export function packageFolder(name: string): string {
  const root = packageRootHolding(name);
  if (root === undefined) throw new UsageError(`Cannot find the ${name}/ directory of the delta-engine package; reinstall it`);
  return path.join(root, name);
}
