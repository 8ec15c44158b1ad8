// Turns a tool definition (exec / shell / command sugar) into one argv plan; pure, throws ConfigError.
import { parse } from "shell-quote";
import { closestWord } from "../did-you-mean.js";
import { ConfigError } from "../errors.js";
import type { InjectAs, ToolDefinition, ToolEffects, ToolParameterDefinition } from "./schema.js";
import type { SandboxPolicy } from "../process/sandbox/policy-schema.js";
import { allowedBecause, argvOccurrences, combined, shellOccurrence, type LeadingDash } from "./leading-dash.js";
import { rewriteShellPlaceholders, UnbalancedScriptError } from "./shell-script.js";

/** Variables filled in at bind time with absolute paths; never parameters. */
const PATH_VARIABLES = ["AGENT_HOME", "CWD"] as const;
const RESERVED_TOOL_NAMES = ["ask_human"] as const;

export interface ExpandedParameter {
  name: string;
  type: "string";
  description?: string;
  required: boolean;
  default?: string;
  inject_as: InjectAs;
  option_name?: string;
  /** exec: order of first appearance; shell: N-1 for "$N"; command: order among arguments. */
  position?: number;
  raw: boolean;
  /** Whether a value starting with `-` (not a number) is refused before the tool runs, or allowed and why (leading-dash.ts). */
  leading_dash: LeadingDash;
}

/** A literal may contain ${AGENT_HOME} / ${CWD}; a param entry is one whole parameter value. */
type ArgvEntry = { literal: string } | { param: string };

export interface ExpandedTool {
  name: string;
  description: string;
  mode: "exec" | "shell" | "command";
  argv: ArgvEntry[];
  parameters: ExpandedParameter[];
  timeout_ms?: number;
  /** The tool's own sandbox, which replaces the agent's for it. */
  sandbox?: SandboxPolicy;
  source: string;
  /** Where the definition is, for messages: `agent.yaml: tools[2]`. */
  definedAt: string;
  /** Whether the program (argv[0] of exec and command tools) must exist when the agent loads. */
  checkProgram: boolean;
  /** What the definition writes that is deprecated, each a note for stderr when the agent loads. */
  deprecations: string[];
  /** `idempotent`: a call a crash left in doubt runs again on `continue`, with the same idempotency key. */
  effects?: ToolEffects;
}

/** Where a definition was written, for messages: `agent.yaml` + `tools[2]`. */
interface ToolLocation {
  file: string;
  path: string;
}

interface Placeholder {
  start: number;
  end: number;
  name: string;
  raw: boolean;
}

interface Inferred {
  argv: ArgvEntry[];
  parameters: ExpandedParameter[];
  deprecations?: string[];
}

const PLACEHOLDER_BODY = /^([A-Za-z_][A-Za-z0-9_]{0,63})(:raw)?$/;

export function expandTool(def: ToolDefinition, where: ToolLocation): ExpandedTool {
  const fail = (field: string, message: string): never => {
    const suffix = field ? `.${field}` : "";
    throw new ConfigError(`${where.file}: ${where.path}${suffix} (tool '${def.name}'): ${message}`);
  };
  if ((RESERVED_TOOL_NAMES as readonly string[]).includes(def.name)) {
    fail("name", `'${def.name}' is a built-in tool; choose another name for your tool`);
  }
  const expanded = expandByMode(def, fail);
  const tool: ExpandedTool = {
    name: def.name,
    description: def.description ?? `Run \`${templateText(def)}\``,
    mode: def.exec !== undefined ? "exec" : def.shell !== undefined ? "shell" : "command",
    argv: expanded.argv,
    parameters: expanded.parameters,
    source: where.file,
    definedAt: `${where.file}: ${where.path}`,
    checkProgram: def.check_program !== false,
    deprecations: (expanded.deprecations ?? []).map((note) => `[DEPRECATION WARNING] ${where.file}: ${where.path}.${note}`),
  };
  if (def.timeout_ms !== undefined) tool.timeout_ms = def.timeout_ms;
  if (def.sandbox !== undefined) tool.sandbox = def.sandbox;
  if (def.effects !== undefined) tool.effects = def.effects;
  return tool;
}

type Fail = (field: string, message: string) => never;

function expandByMode(def: ToolDefinition, fail: Fail): Inferred {
  if (def.command !== undefined) return expandCommand(def.command, def, fail);
  const inferred = def.exec !== undefined ? expandExec(def.exec, fail) : expandShell(def.shell ?? "", fail);
  return { argv: inferred.argv, parameters: mergeExplicit(inferred.parameters, def, fail), deprecations: leadingDashDeprecations(def) };
}

/** reject_leading_dash still loads: refusing is the default now, so it says nothing more; a note says what to write instead. */
function leadingDashDeprecations(def: ToolDefinition): string[] {
  return (def.parameters ?? []).flatMap((parameter, index) =>
    parameter.reject_leading_dash === undefined
      ? []
      : [`parameters[${index}].reject_leading_dash (tool '${def.name}'): a value starting with "-" that would stand as an argument of its own is refused by default now; remove reject_leading_dash, or write allow_leading_dash: true where such a value is wanted`],
  );
}

function templateText(def: ToolDefinition): string {
  return def.exec ?? def.shell ?? (def.command ?? []).join(" ");
}

function isPathVariable(name: string): boolean {
  return (PATH_VARIABLES as readonly string[]).includes(name);
}

/** Every `${…}` in a template; anything that is not `${name}` or `${name:raw}` is refused. */
function findPlaceholders(text: string, field: string, fail: Fail): Placeholder[] {
  const found: Placeholder[] = [];
  let start = text.indexOf("${");
  while (start !== -1) {
    const placeholder = readPlaceholder(text, start, field, fail);
    found.push(placeholder);
    start = text.indexOf("${", placeholder.end);
  }
  return found;
}

/** The placeholder whose `${` is at `start`. */
function readPlaceholder(text: string, start: number, field: string, fail: Fail): Placeholder {
  const close = text.indexOf("}", start);
  if (close === -1) return fail(field, `unterminated placeholder '${text.slice(start, start + 20)}': close it with }`);
  const body = text.slice(start + 2, close);
  const match = PLACEHOLDER_BODY.exec(body);
  if (!match || !match[1]) {
    const hint = field === "shell" ? "; for a shell variable write $NAME without braces" : "";
    return fail(field, `'\${${body}}' is not a valid placeholder; write \${name} or \${name:raw} (name: letters, digits, _)${hint}`);
  }
  return { start, end: close + 1, name: match[1], raw: match[2] !== undefined };
}

function newParameter(name: string, position: number | undefined, raw: boolean, leadingDash: LeadingDash): ExpandedParameter {
  const parameter: ExpandedParameter = { name, type: "string", required: true, inject_as: "argument", raw, leading_dash: leadingDash };
  if (position !== undefined) parameter.position = position;
  return parameter;
}

function sentinelPrefix(text: string): string {
  let prefix = "DELTAPH";
  while (text.includes(prefix)) prefix += "X";
  return prefix;
}

function expandExec(template: string, fail: Fail): Inferred {
  const quote = unclosedQuote(template);
  // shell-quote silently drops an unclosed quote and splits what it held into words.
  if (quote) fail("exec", `a ${quote} quote is never closed; close it, or escape it with \\`);
  const placeholders = findPlaceholders(template, "exec", fail);
  const prefix = sentinelPrefix(template);
  const sentinel = (index: number): string => `${prefix}${index}Z`;
  let protectedText = "";
  let cursor = 0;
  placeholders.forEach((placeholder, index) => {
    if (placeholder.raw) fail("exec", `\${${placeholder.name}:raw}: :raw is only valid in shell: mode`);
    protectedText += template.slice(cursor, placeholder.start) + sentinel(index);
    cursor = placeholder.end;
  });
  protectedText += template.slice(cursor);

  const variables: string[] = [];
  const tokens = parse(protectedText, (key) => {
    variables.push(key);
    return "";
  });
  if (variables.length > 0) {
    fail("exec", `'$${variables[0]}' would need a shell to expand, and exec: mode runs no shell. Use shell: mode, or \${AGENT_HOME} / \${CWD} for paths`);
  }
  const restore = (token: string): string =>
    placeholders.reduce((text, placeholder, index) => text.replaceAll(sentinel(index), `\${${placeholder.name}}`), token);

  const argv: ArgvEntry[] = [];
  const parameters: ExpandedParameter[] = [];
  for (const token of tokens) {
    if (typeof token !== "string") {
      const shown = "op" in token ? (token.op === "glob" ? globChar(token.pattern) : token.op) : "#";
      fail("exec", `Shell metacharacter '${shown}' not allowed in exec: mode. Use shell: mode instead.`);
      continue;
    }
    const whole = placeholders.findIndex((_, index) => token === sentinel(index));
    const wholePlaceholder = placeholders[whole];
    if (wholePlaceholder && !isPathVariable(wholePlaceholder.name)) {
      if (argv.length === 0) fail("exec", `the program (first word) must be fixed text, not \${${wholePlaceholder.name}}`);
      argv.push({ param: wholePlaceholder.name });
      if (!parameters.some((p) => p.name === wholePlaceholder.name)) {
        parameters.push(newParameter(wholePlaceholder.name, parameters.length, false, allowedBecause("")));
      }
      continue;
    }
    const embedded = placeholders.find((p, index) => token.includes(sentinel(index)) && !isPathVariable(p.name));
    if (embedded) {
      fail(
        "exec",
        `'${restore(token)}' mixes text with \${${embedded.name}}; in exec: mode a placeholder must be a whole word so its value stays one argument. ` +
          `Use shell: mode (e.g. --file="\${${embedded.name}}"), or a command: tool with inject_as: option`,
      );
    }
    argv.push({ literal: restore(token) });
  }
  if (argv.length === 0) fail("exec", "the template is empty; write the program and its arguments");
  const occurrences = argvOccurrences(argv);
  for (const parameter of parameters) parameter.leading_dash = combined(occurrences.get(parameter.name) ?? []);
  return { argv, parameters };
}

/** The quote character left open at the end of `text`, or null; a backslash escapes outside single quotes. */
function unclosedQuote(text: string): string | null {
  let open: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === "\\" && open !== "'") {
      i += 1;
      continue;
    }
    if (open === null && (char === "'" || char === '"')) open = char;
    else if (char === open) open = null;
  }
  return open;
}

function globChar(pattern: string): string {
  return /[*?[]/.exec(pattern)?.[0] ?? "*";
}

/**
 * Rewrites `${p}` to a positional parameter quoted for the spot it sits in:
 * unquoted → "$N", inside "…" → $N, inside '…' → '"$N"'; `${p:raw}` drops the quotes.
 */
function expandShell(script: string, fail: Fail): Inferred {
  const positional: ArgvEntry[] = [];
  const rawByName = new Map<string, boolean>();
  const occurrences = new Map<string, LeadingDash[]>();
  const numberOf = (placeholder: Placeholder): number => {
    if (isPathVariable(placeholder.name) && placeholder.raw) fail("shell", `\${${placeholder.name}:raw}: ${placeholder.name} cannot be :raw`);
    const known = rawByName.get(placeholder.name);
    if (known !== undefined && known !== placeholder.raw) {
      fail("shell", `parameter '${placeholder.name}' is used both with and without :raw; use one form everywhere`);
    }
    rawByName.set(placeholder.name, placeholder.raw);
    const entry: ArgvEntry = isPathVariable(placeholder.name) ? { literal: `\${${placeholder.name}}` } : { param: placeholder.name };
    const index = positional.findIndex((e) => JSON.stringify(e) === JSON.stringify(entry));
    if (index !== -1) return index + 1;
    positional.push(entry);
    return positional.length;
  };
  const ref = (n: number): string => (n > 9 ? `\${${n}}` : `$${n}`);

  let out: string;
  try {
    out = rewriteShellPlaceholders(script, (start, quoting, limit, place) => {
      const placeholder = readPlaceholder(script.slice(0, limit), start, "shell", fail);
      const n = ref(numberOf(placeholder));
      occurrences.set(placeholder.name, [...(occurrences.get(placeholder.name) ?? []), shellOccurrence(place)]);
      if (quoting === "single") return { text: placeholder.raw ? `'${n}'` : `'"${n}"'`, end: placeholder.end };
      return { text: quoting === "double" || placeholder.raw ? n : `"${n}"`, end: placeholder.end };
    });
  } catch (err) {
    if (err instanceof UnbalancedScriptError) return fail("shell", err.message);
    throw err;
  }

  const parameters: ExpandedParameter[] = [];
  positional.forEach((entry, index) => {
    if ("param" in entry) parameters.push(newParameter(entry.param, index, rawByName.get(entry.param) ?? false, combined(occurrences.get(entry.param) ?? [])));
  });
  return { argv: [{ literal: "sh" }, { literal: "-c" }, { literal: out }, { literal: "--" }, ...positional], parameters };
}

function explicitParameterFor(def: ToolDefinition, name: string): ToolParameterDefinition | undefined {
  return (def.parameters ?? []).find((p) => p.name === name);
}

function checkDuplicates(def: ToolDefinition, fail: Fail): void {
  const seen = new Set<string>();
  (def.parameters ?? []).forEach((p, index) => {
    if (seen.has(p.name)) fail(`parameters[${index}]`, `parameter '${p.name}' is declared twice; keep one entry`);
    seen.add(p.name);
  });
}

/** Spec 2.2.4: the template decides inject_as, position and raw; the block may add description, default, required. */
function mergeExplicit(inferred: ExpandedParameter[], def: ToolDefinition, fail: Fail): ExpandedParameter[] {
  checkDuplicates(def, fail);
  const parameters = [...inferred];
  if (def.stdin !== undefined) {
    if (parameters.some((p) => p.name === def.stdin)) {
      fail("stdin", `parameter '${def.stdin}' feeds stdin, so it cannot also appear as \${${def.stdin}} in the template`);
    }
    parameters.push({ name: def.stdin, type: "string", required: true, inject_as: "stdin", raw: false, leading_dash: allowedBecause("stdin") });
  }
  (def.parameters ?? []).forEach((explicit, index) => {
    const field = `parameters[${index}]`;
    const target = parameters.find((p) => p.name === explicit.name);
    if (!target) {
      // A placeholder the block does not declare, one slip away from this name, is the likely typo (`${pathh}` for `path`).
      const undeclared = parameters.filter((p) => !(def.parameters ?? []).some((declared) => declared.name === p.name)).map((p) => p.name);
      const typo = closestWord(explicit.name, undeclared);
      if (typo !== undefined) {
        return fail(
          field,
          `Parameter '${explicit.name}' is not used in the template, which has \${${typo}} instead: did you mean \${${explicit.name}}? Write the same name in both places`,
        );
      }
      return fail(
        field,
        `Parameter '${explicit.name}' is not used in the template; add \${${explicit.name}} to it, use stdin: ${explicit.name} for standard input, or remove this entry`,
      );
    }
    if (explicit.inject_as !== undefined && explicit.inject_as !== target.inject_as) {
      fail(field, `Cannot override inject_as for parameter '${explicit.name}' (inferred: ${target.inject_as}, explicit: ${explicit.inject_as})`);
    }
    if (explicit.position !== undefined && explicit.position !== target.position) {
      fail(field, `Cannot override position for parameter '${explicit.name}' (inferred: ${target.position ?? "none"}, explicit: ${explicit.position})`);
    }
    if (explicit.raw !== undefined && explicit.raw !== target.raw) {
      fail(field, `Cannot override raw for parameter '${explicit.name}' (inferred: ${target.raw}, explicit: ${explicit.raw}); write \${${explicit.name}:raw} in a shell: template instead`);
    }
    if (explicit.option_name !== undefined) fail(field, "option_name is only valid with inject_as: option in a command: tool");
    if (explicit.description !== undefined) target.description = explicit.description;
    if (explicit.default !== undefined) target.default = explicit.default;
    if (explicit.required !== undefined) target.required = explicit.required;
    target.leading_dash = explicitLeadingDash(explicit, target.leading_dash, field, fail);
  });
  return parameters;
}

/** allow_leading_dash: true lets any value through; with reject_leading_dash: true beside it, the entry contradicts itself. */
function explicitLeadingDash(explicit: ToolParameterDefinition, inferred: LeadingDash, field: string, fail: Fail): LeadingDash {
  if (explicit.allow_leading_dash && explicit.reject_leading_dash) {
    return fail(field, "allow_leading_dash: true and reject_leading_dash: true contradict each other; keep allow_leading_dash: true if a value may start with \"-\", else remove both (refusing is the default)");
  }
  return explicit.allow_leading_dash ? allowedBecause("allow_leading_dash: true") : inferred;
}

/**
 * Legacy `command:` form: options go right after the command (flags before operands suits every
 * getopt), then arguments by `position` when every argument declares one, else in declaration order.
 */
function expandCommand(command: string[], def: ToolDefinition, fail: Fail): Inferred {
  checkDuplicates(def, fail);
  const parameters: ExpandedParameter[] = (def.parameters ?? []).map((explicit, index) => {
    const field = `parameters[${index}]`;
    const injectAs = explicit.inject_as ?? (explicit.name === def.stdin ? "stdin" : "argument");
    if (explicit.raw !== undefined) fail(field, "raw is only valid in shell: mode (write ${name:raw} in the script)");
    if (injectAs === "option" && explicit.option_name === undefined) fail(field, "inject_as: option needs option_name (e.g. option_name: --port)");
    if (injectAs !== "option" && explicit.option_name !== undefined) fail(field, "option_name is only valid with inject_as: option");
    if (injectAs !== "argument" && explicit.position !== undefined) fail(field, "position is only valid for inject_as: argument");
    if (explicit.name === def.stdin && injectAs !== "stdin") {
      fail("stdin", `parameter '${explicit.name}' is named by stdin: but declared with inject_as: ${injectAs}`);
    }
    const parameter: ExpandedParameter = {
      name: explicit.name,
      type: "string",
      required: explicit.required ?? true,
      inject_as: injectAs,
      raw: false,
      leading_dash: allowedBecause(injectAs === "argument" ? "" : injectAs === "stdin" ? "stdin" : `inject_as: option (the argument of ${explicit.option_name ?? "its option"})`),
    };
    if (explicit.description !== undefined) parameter.description = explicit.description;
    if (explicit.default !== undefined) parameter.default = explicit.default;
    if (explicit.option_name !== undefined) parameter.option_name = explicit.option_name;
    if (explicit.position !== undefined) parameter.position = explicit.position;
    return parameter;
  });
  if (def.stdin !== undefined && !explicitParameterFor(def, def.stdin)) {
    parameters.push({ name: def.stdin, type: "string", required: true, inject_as: "stdin", raw: false, leading_dash: allowedBecause("stdin") });
  }
  if (parameters.filter((p) => p.inject_as === "stdin").length > 1) {
    fail("parameters", "at most one parameter may use inject_as: stdin");
  }
  const argumentsInOrder = orderArguments(parameters.filter((p) => p.inject_as === "argument"), fail);
  argumentsInOrder.forEach((parameter, index) => (parameter.position = index));
  const options = parameters.filter((p) => p.inject_as === "option");
  // An argument is judged by what comes before it when bound: the command, then each option's name and value.
  const bound: ArgvEntry[] = [...command.map((literal) => ({ literal })), ...options.flatMap((p) => [{ literal: p.option_name! }, { param: p.name }]), ...argumentsInOrder.map((p) => ({ param: p.name }))];
  const occurrences = argvOccurrences(bound);
  (def.parameters ?? []).forEach((explicit, index) => {
    const parameter = parameters.find((p) => p.name === explicit.name)!;
    if (parameter.inject_as === "argument") parameter.leading_dash = combined(occurrences.get(parameter.name) ?? []);
    parameter.leading_dash = explicitLeadingDash(explicit, parameter.leading_dash, `parameters[${index}]`, fail);
  });
  return {
    argv: [...command.map((literal) => ({ literal })), ...[...options, ...argumentsInOrder].map((p) => ({ param: p.name }))],
    parameters,
    deprecations: leadingDashDeprecations(def),
  };
}

function orderArguments(argumentParameters: ExpandedParameter[], fail: Fail): ExpandedParameter[] {
  const withPosition = argumentParameters.filter((p) => p.position !== undefined);
  if (withPosition.length === 0) return argumentParameters;
  if (withPosition.length !== argumentParameters.length) {
    fail("parameters", "either every argument parameter declares position or none does");
  }
  const positions = new Set(withPosition.map((p) => p.position));
  if (positions.size !== withPosition.length) fail("parameters", "two argument parameters share the same position; make positions distinct");
  return [...argumentParameters].sort((a, b) => (a.position ?? 0) - (b.position ?? 0));
}
