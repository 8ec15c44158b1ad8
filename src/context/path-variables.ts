// Expands the two variables context.yaml paths and commands may use: ${AGENT_HOME} and ${CWD}.
import { isAbsolute, resolve } from "node:path";

export interface PathVariables {
  AGENT_HOME: string;
  CWD: string;
}

/** Replaces ${AGENT_HOME} and ${CWD}; any other ${X} is left as written, never read from the environment. */
export function expandPathVariables(text: string, variables: PathVariables): string {
  return text.replace(/\$\{(AGENT_HOME|CWD)\}/g, (_match, name: keyof PathVariables) => variables[name]);
}

/** An expanded path; a relative one is taken from the agent's home, where context.yaml lives. */
export function resolveSourcePath(path: string, variables: PathVariables): string {
  const expanded = expandPathVariables(path, variables);
  return isAbsolute(expanded) ? expanded : resolve(variables.AGENT_HOME, expanded);
}
