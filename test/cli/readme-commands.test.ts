// The README's commands table has a row for every command of the command table (prune and mcp serve included), so a command added later is not left out.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { buildCli } from "../../src/cli/command-table.js";
import { REPO } from "../e2e/harness.js";

it("names every command in a row of its own", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const rows = readme.split("\n").filter((line) => line.startsWith("| `delta "));
  const commands = buildCli().commands.filter((command) => !command.description.startsWith("Same as"));
  // A command with actions is listed by them (`delta tool expand`, `delta mcp serve`).
  const missing = commands.filter((command) => !rows.some((row) => row.startsWith(`| \`delta ${command.name} `) || row.startsWith(`| \`delta ${command.name}\``)));
  expect(missing.map((command) => command.name)).toEqual([]);
  expect(rows.some((row) => row.startsWith("| `delta prune "))).toBe(true);
  expect(rows.some((row) => row.startsWith("| `delta mcp serve "))).toBe(true);
});
