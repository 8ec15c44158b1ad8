// Checks, once the workspace is known and before a run leaves any trace, what would otherwise fail only once it ran.
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import { fileSourceFile } from "../context/sources.js";
import { readSourceFile } from "../context/read-source-file.js";
import { ConfigError } from "../errors.js";
import { expandHookCommand } from "../hooks/hook-env.js";
import type { HookName } from "../hooks/schema.js";
import { expandPathVariables } from "../tools/path-variables.js";
import type { AgentPackage } from "./load.js";

/**
 * Refuses (126) a hook command that does not exist or cannot be executed (it would block every
 * tool call, or warn at every step), an exec or command tool whose program is missing (every call
 * would be an ERROR the model cannot fix), and a context file that is missing without `on_missing: skip`
 * (the run would fail at its first iteration). A file a hook or tool creates during the run must
 * be `on_missing: skip`; computed_file sources are checked when their generator runs.
 */
export async function preflightAgent(agent: AgentPackage, workDir: string): Promise<void> {
  checkHookCommands(agent, workDir);
  checkToolPrograms(agent, workDir);
  await checkContextFiles(agent, workDir);
}

/**
 * The program each exec and command tool starts (its first argv word, as the tool's process will
 * resolve it: on PATH, or from the workspace when it is a path) must exist and be executable.
 * shell tools (a script may define what it runs), a program the model names, and tools with
 * `check_program: false` (the run creates the program) are not checked.
 */
export function checkToolPrograms(agent: AgentPackage, workDir: string): void {
  for (const tool of agent.tools) {
    const first = tool.argv[0];
    if (tool.mode === "shell" || !tool.checkProgram || first === undefined || !("literal" in first)) continue;
    const program = expandPathVariables(first.literal, { AGENT_HOME: agent.home, CWD: workDir });
    const problem = program.includes("/") ? fileProblem(path.resolve(workDir, program)) : pathProblem(program);
    if (problem === null) continue;
    throw new ConfigError(
      `${tool.definedAt} (tool '${tool.name}'): ${tool.mode}: the program ${JSON.stringify(program)} ${problem}. ` +
        "Fix its name or path (a relative path starts from the workspace; use ${AGENT_HOME}/… for a script in the agent directory), install it, " +
        "or, when the run itself creates it, add `check_program: false` to the tool.",
    );
  }
}

function checkHookCommands(agent: AgentPackage, workDir: string): void {
  for (const [name, definition] of Object.entries(agent.hooks) as [HookName, { command: string[] }][]) {
    const [file] = expandHookCommand(definition.command, { agentHome: agent.home, cwd: workDir });
    if (file === undefined || file === "") continue;
    const problem = file.includes("/") ? fileProblem(path.resolve(workDir, file)) : pathProblem(file);
    if (problem !== null) {
      throw new ConfigError(
        `${agent.hooksFile}: ${name}.command[0]: ${JSON.stringify(file)} ${problem}. ` +
          "Fix the path (a relative path starts from the workspace; use ${AGENT_HOME}/… for a script in the agent directory) or make the file executable (chmod +x).",
      );
    }
  }
}

/** Why this file cannot be executed, or null when it can. */
function fileProblem(file: string): string | null {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch {
    return `does not exist (${file})`;
  }
  if (!isFile) return `is not a file (${file})`;
  try {
    accessSync(file, constants.X_OK);
    return null;
  } catch {
    return `is not executable (${file})`;
  }
}

/** A bare command name is looked up on PATH, as the hook's process will be. */
function pathProblem(command: string): string | null {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((dir) => dir !== "");
  return dirs.some((dir) => fileProblem(path.join(dir, command)) === null) ? null : "is not a command found on PATH";
}

async function checkContextFiles(agent: AgentPackage, workDir: string): Promise<void> {
  for (const [index, source] of agent.context.sources.entries()) {
    if (source.type !== "file" || source.on_missing === "skip") continue;
    await readSourceFile(fileSourceFile(source, index, { AGENT_HOME: agent.home, CWD: workDir }));
  }
}
