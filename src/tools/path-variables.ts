// Fills in ${AGENT_HOME} and ${CWD}: as text in an argument, as a variable reference in a shell's script, never as script text.
import { basename } from "node:path";
import { rewriteShellPlaceholders, UnbalancedScriptError, type Quoting } from "./shell-script.js";

export interface PathVariables {
  AGENT_HOME: string;
  CWD: string;
}

/** The environment variable that carries each path to tools, hooks and generators. */
const PATH_VARIABLE_ENV: Readonly<Record<keyof PathVariables, string>> = { AGENT_HOME: "DELTA_AGENT_HOME", CWD: "DELTA_CWD" };

const PLACEHOLDER = /\$\{(AGENT_HOME|CWD)\}/g;
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"]);
/** Shell options that take the next argument as their value. */
const OPTIONS_WITH_VALUE = new Set(["-o", "+o", "-O", "+O", "--rcfile", "--init-file"]);
/** env options that take the next argument as their value. */
const ENV_OPTIONS_WITH_VALUE = new Set(["-u", "--unset", "-C", "--chdir"]);

/** Replaces ${AGENT_HOME} and ${CWD} with the paths; any other ${X} is left as written, never read from the environment. */
export function expandPathVariables(text: string, variables: PathVariables): string {
  return text.replace(PLACEHOLDER, (_match, name: keyof PathVariables) => variables[name]);
}

/**
 * Expands the path variables of a command's argv. An argument is one argv entry, so the path goes in
 * as text; but in the script of a shell's `-c` (`sh -c SCRIPT`, also behind `env`) the text would be
 * parsed as shell code, so there ${CWD} becomes "${DELTA_CWD}" (quoted for where it sits) and the
 * process reads the path from its environment. `literal(index)` says which entries to expand:
 * values the model gave are passed as they are.
 */
export function expandArgvPathVariables(argv: readonly string[], variables: PathVariables, literal: (index: number) => boolean = () => true): string[] {
  const script = shellScriptIndex(argv);
  return argv.map((arg, index) => {
    if (!literal(index)) return arg;
    return index === script ? referToPathVariables(arg) : expandPathVariables(arg, variables);
  });
}

/** The index of the script in `sh -c SCRIPT …` (or `env … bash -lc SCRIPT …`), or -1 when the argv runs no shell script. */
export function shellScriptIndex(argv: readonly string[]): number {
  let i = 0;
  if (basename(argv[0] ?? "") === "env") {
    for (i = 1; i < argv.length; i += 1) {
      const arg = argv[i] ?? "";
      if (ENV_OPTIONS_WITH_VALUE.has(arg)) i += 1;
      else if (!arg.startsWith("-") && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(arg)) break;
    }
  }
  if (!SHELLS.has(basename(argv[i] ?? ""))) return -1;
  let readsScript = false;
  for (i += 1; i < argv.length; i += 1) {
    const arg = argv[i] ?? "";
    if (arg === "--" || arg === "-") return readsScript && i + 1 < argv.length ? i + 1 : -1;
    if (OPTIONS_WITH_VALUE.has(arg)) {
      i += 1;
      continue;
    }
    if (arg.startsWith("--")) continue;
    if (/^[-+][A-Za-z]+$/.test(arg)) {
      if (arg.startsWith("-") && arg.includes("c")) readsScript = true;
      continue;
    }
    return readsScript ? i : -1;
  }
  return -1;
}

/** The script with ${AGENT_HOME} and ${CWD} turned into references to DELTA_AGENT_HOME and DELTA_CWD. */
function referToPathVariables(script: string): string {
  if (!script.includes("${")) return script;
  try {
    return rewriteShellPlaceholders(script, (start, quoting) => {
      const match = /^\$\{(AGENT_HOME|CWD)\}/.exec(script.slice(start, start + 13));
      if (!match) return undefined;
      return { text: quoted(`\${${PATH_VARIABLE_ENV[match[1] as keyof PathVariables]}}`, quoting), end: start + match[0].length };
    });
  } catch (err) {
    if (!(err instanceof UnbalancedScriptError)) throw err;
    // Quoting the shell could not parse either (a ' in a comment, a here-document): a bare reference is never code.
    return script.replace(PLACEHOLDER, (_match, name: keyof PathVariables) => `\${${PATH_VARIABLE_ENV[name]}}`);
  }
}

function quoted(reference: string, quoting: Quoting): string {
  if (quoting === "double") return reference;
  if (quoting === "single") return `'"${reference}"'`;
  return `"${reference}"`;
}
