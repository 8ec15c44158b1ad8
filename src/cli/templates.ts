// The agent templates `delta init` copies: where they are in the package, and their names.
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "../errors.js";

export const DEFAULT_TEMPLATE = "hello-world";

/** The templates/ folder next to package.json, found from src/ (tests) as from dist/ (bundle). */
export function findTemplatesDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "templates");
    if (existsSync(path.join(dir, "package.json")) && existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new UsageError("Cannot find the templates/ directory of the delta-engine package; reinstall it");
    dir = parent;
  }
}

export function listTemplates(templatesDir: string = findTemplatesDir()): string[] {
  return readdirSync(templatesDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
}
