// Finds a folder shipped with the delta-engine package (templates/, schemas/), from src/ (tests) as from dist/ (the bundle).
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.js";

export function packageFolder(name: string): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, name);
    if (existsSync(path.join(dir, "package.json")) && existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new UsageError(`Cannot find the ${name}/ directory of the delta-engine package; reinstall it`);
    dir = parent;
  }
}
