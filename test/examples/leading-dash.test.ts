// Every tool of the templates and examples: a model's value that starts with "-" is refused, or let through for a reason the template shows; none loads with a deprecation note.
import { existsSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REPO, delta, setUpE2e } from "../e2e/harness.js";
import { binDir, pathWith } from "./helpers.js";

const { root } = setUpE2e("delta-leading-dash-");

interface ExpandedParameter {
  name: string;
  inject_as: "argument" | "option" | "stdin";
  leading_dash?: string;
}
interface ExpandedTool {
  name: string;
  parameters: ExpandedParameter[];
}

/**
 * Values the author lets start with "-" by allow_leading_dash: true, each with the reason no program reads
 * them as an option. Every other value is refused or guarded by the template itself (`--`, an option before it).
 */
const ALLOWED_BY_THE_AUTHOR: Record<string, string> = {
  "tool-syntax say text": 'echo reads options only before its first word, and "you said:" is that word',
};

/** Directories holding an agent.yaml, outside run workspaces. */
function agentDirs(dir: string): string[] {
  const found = existsSync(join(dir, "agent.yaml")) ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "workspaces" && entry.name !== "node_modules" && !entry.name.startsWith(".")) found.push(...agentDirs(join(dir, entry.name)));
  }
  return found;
}

const installed: Record<string, string> = {};
beforeAll(() => {
  installed.PATH = pathWith(binDir(root));
});
const agents = [...agentDirs(join(REPO, "templates")), ...agentDirs(join(REPO, "examples"))];

describe.concurrent("values that look like options, in every template and example", () => {
  for (const dir of agents) {
    const name = relative(join(REPO, dir.startsWith(join(REPO, "templates")) ? "templates" : "examples"), dir);
    it(`${relative(REPO, dir)}: every value from the model is refused, guarded by the template, or let through for a stated reason`, async () => {
      const expanded = await delta(["tool", "expand", dir], { env: installed });
      expect(expanded.exitCode, expanded.stderr).toBe(0);
      expect(expanded.stderr).not.toContain("DEPRECATION");
      const tools = (parse(expanded.stdout) as { tools: ExpandedTool[] }).tools;
      const byAuthor = tools.flatMap((tool) =>
        tool.parameters.filter((parameter) => parameter.leading_dash === "allowed: allow_leading_dash: true").map((parameter) => `${name} ${tool.name} ${parameter.name}`),
      );
      expect(byAuthor.filter((key) => ALLOWED_BY_THE_AUTHOR[key] === undefined)).toEqual([]);
      // The list holds no stale entry.
      expect(Object.keys(ALLOWED_BY_THE_AUTHOR).filter((key) => key.split(" ")[0] === name).sort()).toEqual(byAuthor.sort());
      for (const tool of tools) for (const parameter of tool.parameters) if (parameter.inject_as !== "stdin") expect(parameter.leading_dash, `${name} ${tool.name} ${parameter.name}`).toMatch(/^(refused|allowed: .+)$/);
    });
  }
});
