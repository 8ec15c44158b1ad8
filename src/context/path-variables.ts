// Resolves the paths of context.yaml sources, which may use ${AGENT_HOME} and ${CWD}, and the folder each is named in.
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { expandPathVariables, type PathVariables } from "../tools/path-variables.js";

/** An expanded path; a relative one is taken from the agent's home, where context.yaml lives. */
export function resolveSourcePath(path: string, variables: PathVariables): string {
  const expanded = expandPathVariables(path, variables);
  return isAbsolute(expanded) ? expanded : resolve(variables.AGENT_HOME, expanded);
}

/**
 * The folder a resolved source path is named in, out of which no link of it may lead: the deeper of the
 * workspace and the agent's folder that holds it (a workspace inside the agent's folder is the tools' to
 * write), else the file's own folder.
 */
export function sourceFolder(resolved: string, variables: PathVariables): string {
  const holders = [resolve(variables.CWD), resolve(variables.AGENT_HOME)].filter((folder) => holds(folder, resolved));
  holders.sort((a, b) => b.length - a.length);
  return holders[0] ?? dirname(resolved);
}

function holds(folder: string, target: string): boolean {
  const path = relative(folder, target);
  return path !== "" && path !== ".." && !path.startsWith("../") && !isAbsolute(path);
}
