// Every tool of the templates and examples keeps a model's value from being read as an option: `--` before it, or reject_leading_dash.
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
  position?: number;
  raw?: boolean;
  reject_leading_dash?: boolean;
}
interface ExpandedTool {
  name: string;
  command: string[];
  parameters: ExpandedParameter[];
}

/**
 * Values no program reads as an option, each with the reason. Anything else must follow a `--` or
 * refuse a leading dash.
 */
const NEVER_AN_OPTION: Record<string, string> = {
  "sub-agent ask_researcher task": "the value of delta's -m, which delta keeps as typed",
  "sub-agent/researcher longest_word text": "printf reads options only before its format",
  "compaction note line": "printf reads options only before its format",
  "memory-folding log_step line": "printf reads options only before its format",
  "crash-recovery/agent process_item item": "inside the text echo prints",
  "tool-syntax say text": "echo reads options only before its first word",
};

/** Directories holding an agent.yaml, outside run workspaces. */
function agentDirs(dir: string): string[] {
  const found = existsSync(join(dir, "agent.yaml")) ? [dir] : [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== "workspaces" && entry.name !== "node_modules" && !entry.name.startsWith(".")) found.push(...agentDirs(join(dir, entry.name)));
  }
  return found;
}

/** The words of the simple command that holds `"$N"` (or `$N` for a raw value), before it. */
function shellCommandBefore(script: string, parameter: ExpandedParameter): string | null {
  const placeholder = parameter.raw ? `$${parameter.position! + 1}` : `"$${parameter.position! + 1}"`;
  const at = script.indexOf(placeholder);
  if (at < 0) return null;
  return script.slice(0, at).split(/\|\||&&|[|;\n(]/).at(-1)!;
}

/** Whether an argument parameter's value comes after a `--` in its command. */
function followsDoubleDash(tool: ExpandedTool, parameter: ExpandedParameter): boolean {
  const [program, flag, script] = tool.command;
  if ((program === "sh" || program === "bash") && flag === "-c" && script !== undefined) {
    const before = shellCommandBefore(script, parameter);
    return before !== null && /(^|\s)--\s/.test(before);
  }
  const at = tool.command.indexOf(`\${${parameter.name}}`);
  return at > 0 && tool.command.slice(1, at).includes("--");
}

const installed: Record<string, string> = {};
beforeAll(() => {
  installed.PATH = pathWith(binDir(root));
});
const agents = [...agentDirs(join(REPO, "templates")), ...agentDirs(join(REPO, "examples"))];

describe.concurrent("values that look like options, in every template and example", () => {
  for (const dir of agents) {
    const name = relative(join(REPO, dir.startsWith(join(REPO, "templates")) ? "templates" : "examples"), dir);
    it(`${relative(REPO, dir)}: every value from the model follows --, refuses a leading dash, or is never an option`, async () => {
      const expanded = await delta(["tool", "expand", dir], { env: installed });
      expect(expanded.exitCode, expanded.stderr).toBe(0);
      const tools = (parse(expanded.stdout) as { tools: ExpandedTool[] }).tools;
      const unguarded = tools.flatMap((tool) =>
        tool.parameters
          .filter((parameter) => parameter.inject_as === "argument" && !parameter.reject_leading_dash && !followsDoubleDash(tool, parameter))
          .map((parameter) => `${name} ${tool.name} ${parameter.name}`),
      );
      expect(unguarded.filter((key) => NEVER_AN_OPTION[key] === undefined)).toEqual([]);
      // Each value let through is still there, and still unguarded: the list holds no stale entry.
      expect(Object.keys(NEVER_AN_OPTION).filter((key) => key.split(" ")[0] === name).sort()).toEqual(unguarded.sort());
    });
  }
});
