// Resolves the paths of context.yaml sources, which may use ${AGENT_HOME} and ${CWD}.
import { isAbsolute, resolve } from "node:path";
import { expandPathVariables, type PathVariables } from "../tools/path-variables.js";

/** An expanded path; a relative one is taken from the agent's home, where context.yaml lives. */
export function resolveSourcePath(path: string, variables: PathVariables): string {
  const expanded = expandPathVariables(path, variables);
  return isAbsolute(expanded) ? expanded : resolve(variables.AGENT_HOME, expanded);
}
