// Binds a model's tool-call arguments to an expanded tool: the argv and stdin to run, or why not.
import type { ExpandedParameter, ExpandedTool } from "./expand.js";
import { isNegativeNumber } from "./leading-dash.js";
import { expandArgvPathVariables, type PathVariables } from "./path-variables.js";

export type { PathVariables } from "./path-variables.js";

type BindResult = { ok: true; argv: string[]; stdin: string | undefined } | { ok: false; error: string };

/** Never throws: every problem with the arguments comes back as a message the model can act on. */
export function bindToolCall(tool: ExpandedTool, args: unknown, vars: PathVariables): BindResult {
  const values = readValues(tool, args);
  if (typeof values === "string") return { ok: false, error: values };

  const argv: string[] = [];
  // Only the template's own text holds ${AGENT_HOME} / ${CWD}; the model's values are passed as they are.
  const literals = new Set<number>();
  for (const entry of tool.argv) {
    if ("literal" in entry) {
      literals.add(argv.length);
      argv.push(entry.literal);
      continue;
    }
    const parameter = tool.parameters.find((p) => p.name === entry.param);
    const value = values.get(entry.param);
    if (value === undefined) {
      // Shell positionals keep their numbers, so an absent value is still passed, as "".
      if (tool.mode === "shell") argv.push("");
      continue;
    }
    if (parameter?.inject_as === "option" && parameter.option_name !== undefined) argv.push(parameter.option_name);
    argv.push(value);
  }
  const stdinParameter = tool.parameters.find((p) => p.inject_as === "stdin");
  const expanded = expandArgvPathVariables(argv, vars, (index) => literals.has(index));
  return { ok: true, argv: expanded, stdin: stdinParameter ? values.get(stdinParameter.name) : undefined };
}

/** The value of each parameter (defaults applied), or an error message. */
function readValues(tool: ExpandedTool, args: unknown): Map<string, string> | string {
  const expected = describeExpected(tool.parameters);
  if (args !== undefined && args !== null && (typeof args !== "object" || Array.isArray(args))) {
    return `Arguments for '${tool.name}' must be a JSON object; expected ${expected}.`;
  }
  const given = (args ?? {}) as Record<string, unknown>;
  const unknownKeys = Object.keys(given).filter((key) => !tool.parameters.some((p) => p.name === key));
  if (unknownKeys.length > 0) {
    return `Unknown parameter${unknownKeys.length > 1 ? "s" : ""} ${unknownKeys.map((k) => `'${k}'`).join(", ")} for '${tool.name}'; expected ${expected}.`;
  }
  const values = new Map<string, string>();
  for (const parameter of tool.parameters) {
    const raw = given[parameter.name];
    if (raw === undefined || raw === null) {
      if (parameter.default !== undefined) values.set(parameter.name, parameter.default);
      else if (parameter.required) return `Missing required parameter '${parameter.name}' for '${tool.name}'; expected ${expected}.`;
      continue;
    }
    if (typeof raw === "object") {
      return `Parameter '${parameter.name}' of '${tool.name}' must be a string, not ${Array.isArray(raw) ? "an array" : "an object"}.`;
    }
    const value = String(raw);
    if (parameter.leading_dash.refused && value.startsWith("-") && !isNegativeNumber(value)) {
      return `Parameter '${parameter.name}' of '${tool.name}' must not start with "-" (the program would read ${JSON.stringify(value.slice(0, 40))} as an option); for a file whose name starts with "-", write ./${value.slice(0, 40)}.`;
    }
    values.set(parameter.name, value);
  }
  return values;
}

function describeExpected(parameters: ExpandedParameter[]): string {
  if (parameters.length === 0) return "no parameters ({})";
  const list = parameters.map((p) => `${p.name} (string, ${p.required && p.default === undefined ? "required" : "optional"})`);
  return `{${list.join(", ")}}`;
}
