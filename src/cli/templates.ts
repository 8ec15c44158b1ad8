// The agent templates `delta init` copies: where they are in the package, and their names.
import { readdirSync } from "node:fs";
import { packageFolder } from "./package-dir.js";

export const DEFAULT_TEMPLATE = "hello-world";

/** The templates/ folder next to package.json. */
export function findTemplatesDir(): string {
  return packageFolder("templates");
}

export function listTemplates(templatesDir: string = findTemplatesDir()): string[] {
  return readdirSync(templatesDir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
}
