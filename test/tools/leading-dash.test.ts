// Option-like values refused by default: a value starting with "-" that would stand as an argv entry of its own is refused, unless the template shows how it is read.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.js";
import { bindToolCall } from "../../src/tools/bind.js";
import { expandTool, type ExpandedTool } from "../../src/tools/expand.js";
import { ToolDefinitionSchema } from "../../src/tools/schema.js";

function tool(definition: Record<string, unknown>): ExpandedTool {
  return expandTool(ToolDefinitionSchema.parse({ name: "t", ...definition }), { file: "agent.yaml", path: "tools[0]" });
}

/** What each parameter's value starting with "-" gets: "refused", or the reason it is allowed. */
function rules(definition: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(tool(definition).parameters.map((parameter) => [parameter.name, parameter.leading_dash.refused ? "refused" : parameter.leading_dash.because]));
}

const bind = (expanded: ExpandedTool, args: Record<string, unknown>) => bindToolCall(expanded, args, { AGENT_HOME: "/agent", CWD: "/work" });

describe("exec: which values may start with a dash", () => {
  it.each([
    ["sort ${file}", { file: "refused" }],
    ["sort -- ${file}", { file: "after -- in the template" }],
    ["git commit -m ${msg}", { msg: "the argument of -m in the template" }],
    ["tool --file ${f} ${g}", { f: "the argument of --file in the template", g: "refused" }],
    ["tool --flag=x ${v}", { v: "refused" }],
    ["tool - ${v}", { v: "refused" }],
    ["tool ${a} -- ${b}", { a: "refused", b: "after -- in the template" }],
  ])("%s", (exec, expected) => {
    expect(rules({ exec })).toEqual(expected);
  });

  it("refuses a parameter wherever one of its places is unguarded", () => {
    expect(rules({ exec: "tool -- ${x} ${x}" })).toEqual({ x: "after -- in the template" });
    expect(rules({ exec: "tool -m ${x} ${x}" })).toEqual({ x: "refused" });
  });
});

describe("shell: which values may start with a dash, by the words of their command", () => {
  it.each([
    ["sort ${file}", { file: "refused" }],
    ['sort -- "${file}"', { file: "after -- in the template" }],
    ["grep -e ${p} data.txt", { p: "the argument of -e in the template" }],
    ['cmd --file="${f}"', { f: "inside a word of the template" }],
    ["cmd prefix${v}", { v: "inside a word of the template" }],
    ["cat < ${f} | wc -l", { f: "the file of a redirection" }],
    ["echo hi > ${f}", { f: "the file of a redirection" }],
    ["echo a -- b; sort ${f}", { f: "refused" }],
    ["echo -- && sort ${f}", { f: "refused" }],
    ["x=$(sort ${f})", { f: "refused" }],
    ["x=$(sort -- ${f}); echo \"$x\"", { f: "after -- in the template" }],
    ["cmd 2>&1 ${x}", { x: "refused" }],
    ["cmd '${x}'", { x: "refused" }],
    ["cmd '--opt=${x}'", { x: "inside a word of the template" }],
    ["${cmd} --verbose", { cmd: "the command's name" }],
    ["ls -1 -- ${glob:raw}", { glob: "after -- in the template" }],
    ["printf '%s\\n' ${line}", { line: "refused" }],
  ])("%s", (shell, expected) => {
    expect(rules({ shell })).toEqual(expected);
  });
});

describe("command: and the explicit keys", () => {
  it("takes an option's value and stdin as they are; an argument after the command is refused unless -- is in it", () => {
    const parameters = [
      { name: "port", inject_as: "option", option_name: "--port" },
      { name: "target", inject_as: "argument" },
      { name: "body", inject_as: "stdin" },
    ];
    expect(rules({ command: ["serve"], parameters })).toEqual({ port: "inject_as: option (the argument of --port)", target: "refused", body: "stdin" });
    expect(rules({ command: ["serve", "--"], parameters: parameters.slice(1, 2) })).toEqual({ target: "after -- in the template" });
  });

  it("lets any value through with allow_leading_dash: true, and refuses it beside reject_leading_dash: true", () => {
    expect(rules({ exec: "echo ${text}", parameters: [{ name: "text", allow_leading_dash: true }] })).toEqual({ text: "allow_leading_dash: true" });
    expect(() => tool({ exec: "echo ${text}", parameters: [{ name: "text", allow_leading_dash: true, reject_leading_dash: true }] })).toThrow(ConfigError);
  });

  it("still loads reject_leading_dash (the default now), with a deprecation note naming the field and the fix", () => {
    const expanded = tool({ exec: "cat -- ${path}", parameters: [{ name: "path", reject_leading_dash: true }] });
    expect(expanded.parameters[0]!.leading_dash).toEqual({ refused: false, because: "after -- in the template" });
    expect(expanded.deprecations).toEqual([
      '[DEPRECATION WARNING] agent.yaml: tools[0].parameters[0].reject_leading_dash (tool \'t\'): a value starting with "-" that would stand as an argument of its own is refused by default now; remove reject_leading_dash, or write allow_leading_dash: true where such a value is wanted',
    ]);
    expect(tool({ exec: "cat -- ${path}" }).deprecations).toEqual([]);
  });
});

describe("binding a value", () => {
  const sort = tool({ exec: "sort ${file}" });

  it.each(["--output=/tmp/victim", "-o", "-", "--", "-rf x"])("refuses %j where it would stand as an option, saying how to name such a file", (value) => {
    const bound = bind(sort, { file: value });
    expect(bound.ok).toBe(false);
    expect(!bound.ok && bound.error).toContain(`Parameter 'file' of 't' must not start with "-" (the program would read ${JSON.stringify(value)} as an option); for a file whose name starts with "-", write ./${value}.`);
  });

  it.each(["-5", "-0.25", "-.5", "-1e3", "-2E-4"])("passes the number %s", (value) => {
    expect(bind(sort, { file: value })).toEqual({ ok: true, argv: ["sort", value], stdin: undefined });
  });

  it("passes a value that is a number the model sent as a JSON number", () => {
    expect(bind(sort, { file: -7 })).toEqual({ ok: true, argv: ["sort", "-7"], stdin: undefined });
  });

  it("passes any value where the template guards it", () => {
    expect(bind(tool({ exec: "sort -- ${file}" }), { file: "--output=x" })).toEqual({ ok: true, argv: ["sort", "--", "--output=x"], stdin: undefined });
  });
});
