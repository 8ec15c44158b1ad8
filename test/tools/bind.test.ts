import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bindToolCall } from "../../src/tools/bind.js";
import { expandTool, type ExpandedTool } from "../../src/tools/expand.js";
import { ToolDefinitionSchema } from "../../src/tools/schema.js";

let home: string;
let cwd: string;

beforeAll(async () => {
  home = await mkdtemp(path.join(os.tmpdir(), "delta-bind-home-"));
  cwd = await mkdtemp(path.join(os.tmpdir(), "delta-bind-cwd-"));
  // Prints its arguments as JSON so a test sees exactly what argv arrived.
  await writeFile(path.join(home, "args.cjs"), "process.stdout.write(JSON.stringify(process.argv.slice(2)));\n");
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
  await rm(cwd, { recursive: true, force: true });
});

function tool(definition: Record<string, unknown>): ExpandedTool {
  return expandTool(ToolDefinitionSchema.parse({ name: "t", ...definition }), { file: "agent.yaml", path: "tools[0]" });
}

function bindOk(expanded: ExpandedTool, args: unknown): { argv: string[]; stdin: string | undefined } {
  const bound = bindToolCall(expanded, args, { AGENT_HOME: home, CWD: cwd });
  if (!bound.ok) throw new Error(bound.error);
  return bound;
}

function runBound(expanded: ExpandedTool, args: unknown): unknown {
  const { argv, stdin } = bindOk(expanded, args);
  const [program, ...rest] = argv;
  const output = execFileSync(program ?? "", rest, { cwd, input: stdin ?? "", encoding: "utf8" });
  return JSON.parse(output);
}

function bindError(expanded: ExpandedTool, args: unknown): string {
  const bound = bindToolCall(expanded, args, { AGENT_HOME: home, CWD: cwd });
  if (bound.ok) throw new Error(`expected an error, got ${JSON.stringify(bound.argv)}`);
  return bound.error;
}

const HOSTILE = [
  '"; touch pwned ; "',
  "$(touch pwned)",
  "`touch pwned`",
  "a\ntouch pwned",
  "-rf",
  "--help",
  `it's "quoted"`,
  "two  spaced words",
  "*",
  "",
];

const hostileArgs = Object.fromEntries(HOSTILE.map((value, index) => [`v${index}`, value]));
const hostilePlaceholders = HOSTILE.map((_, index) => `\${v${index}}`);

describe("binding hostile values", () => {
  it("passes each hostile value to an exec tool as exactly one argument", () => {
    // After `--`, a value that starts with "-" is an operand: it is let through.
    const expanded = tool({ exec: `node \${AGENT_HOME}/args.cjs -- ${hostilePlaceholders.join(" ")}` });
    expect(runBound(expanded, hostileArgs)).toEqual(["--", ...HOSTILE]);
    expect(existsSync(path.join(cwd, "pwned"))).toBe(false);
  });

  it("passes each hostile value through a shell tool's quoted positionals unchanged", () => {
    const inDouble = hostilePlaceholders.map((p) => `"in-double:${p}"`);
    const inSingle = hostilePlaceholders.map((p) => `'in-single:${p}'`);
    const expanded = tool({ shell: `node \${AGENT_HOME}/args.cjs -- ${hostilePlaceholders.join(" ")} ${inDouble.join(" ")} ${inSingle.join(" ")} | cat` });
    expect(runBound(expanded, hostileArgs)).toEqual(["--", ...HOSTILE, ...HOSTILE.map((v) => `in-double:${v}`), ...HOSTILE.map((v) => `in-single:${v}`)]);
    expect(existsSync(path.join(cwd, "pwned"))).toBe(false);
  });

  it("keeps a value inside command substitution quoted", () => {
    const expanded = tool({ shell: 'echo "$(node ${AGENT_HOME}/args.cjs ${value})"' });
    expect(runBound(expanded, { value: "a b; touch pwned" })).toEqual(["a b; touch pwned"]);
    expect(existsSync(path.join(cwd, "pwned"))).toBe(false);
  });

  it("lets :raw values split on spaces and expand globs in the shell", async () => {
    await writeFile(path.join(cwd, "a.log"), "");
    await writeFile(path.join(cwd, "b.log"), "");
    const expanded = tool({ shell: "node ${AGENT_HOME}/args.cjs ${pattern:raw} ${flags:raw}", parameters: [{ name: "flags", allow_leading_dash: true }] });
    expect(runBound(expanded, { pattern: "*.log", flags: "-d -p 80:80" })).toEqual(["a.log", "b.log", "-d", "-p", "80:80"]);
    expect((await readdir(cwd)).sort()).toEqual(["a.log", "b.log"]);
    await rm(path.join(cwd, "a.log"));
    await rm(path.join(cwd, "b.log"));
  });

  it("feeds the stdin parameter to the process's standard input", () => {
    const expanded = tool({ exec: "node -e ${code}", stdin: "content" });
    const { argv, stdin } = bindOk(expanded, { code: "process.stdin.pipe(process.stdout)", content: "$(touch pwned)\n" });
    const output = execFileSync(argv[0] ?? "", argv.slice(1), { cwd, input: stdin, encoding: "utf8" });
    expect(output).toBe("$(touch pwned)\n");
    expect(existsSync(path.join(cwd, "pwned"))).toBe(false);
  });
});

describe("binding arguments", () => {
  it("substitutes ${AGENT_HOME} and ${CWD} in literals, including a shell tool's positional", () => {
    const exec = bindOk(tool({ exec: "cat ${AGENT_HOME}/x --out=${CWD}/y" }), {});
    expect(exec.argv).toEqual(["cat", `${home}/x`, `--out=${cwd}/y`]);
    expect(runBound(tool({ shell: "node ${AGENT_HOME}/args.cjs ${CWD}" }), {})).toEqual([cwd]);
  });

  it("converts numbers and booleans to strings", () => {
    expect(bindOk(tool({ exec: "echo ${n} ${b}" }), { n: 42, b: true }).argv).toEqual(["echo", "42", "true"]);
  });

  it("names the missing required parameter and lists the expected ones", () => {
    const message = bindError(tool({ exec: "grep ${pattern} ${file}" }), { pattern: "x" });
    expect(message).toContain("Missing required parameter 'file'");
    expect(message).toContain("pattern (string, required)");
  });

  it("refuses unknown keys, non-object arguments and object values without throwing", () => {
    const expanded = tool({ exec: "ls ${dir}" });
    expect(bindError(expanded, { dir: ".", extra: 1 })).toContain("Unknown parameter 'extra'");
    expect(bindError(expanded, "ls")).toContain("must be a JSON object");
    expect(bindError(expanded, [1])).toContain("must be a JSON object");
    expect(bindError(expanded, { dir: { a: 1 } })).toContain("must be a string, not an object");
    expect(bindError(expanded, { dir: ["a"] })).toContain("not an array");
  });

  it("applies defaults and drops absent optional exec arguments but keeps shell positions stable", () => {
    const exec = tool({ exec: "ls ${a} ${b}", parameters: [{ name: "a", required: false }, { name: "b", default: "dflt" }] });
    expect(bindOk(exec, {}).argv).toEqual(["ls", "dflt"]);
    const shell = tool({ shell: "node ${AGENT_HOME}/args.cjs ${a} ${b}", parameters: [{ name: "a", required: false }] });
    expect(runBound(shell, { b: "second" })).toEqual(["", "second"]);
  });

  it("binds a legacy command tool with an option and positioned arguments", () => {
    const expanded = tool({
      command: ["node", "${AGENT_HOME}/args.cjs"],
      parameters: [
        { name: "file", position: 1 },
        { name: "port", inject_as: "option", option_name: "--port", required: false },
        { name: "mode", position: 0 },
      ],
    });
    expect(runBound(expanded, { file: "f.txt", port: 8080, mode: "fast" })).toEqual(["--port", "8080", "fast", "f.txt"]);
    expect(runBound(expanded, { file: "f.txt", mode: "fast" })).toEqual(["fast", "f.txt"]);
  });

  it("treats null and missing arguments as an empty object", () => {
    const expanded = tool({ exec: "ls ${a}", parameters: [{ name: "a", required: false }] });
    expect(bindOk(expanded, null).argv).toEqual(["ls"]);
    expect(bindOk(expanded, undefined).argv).toEqual(["ls"]);
  });
});
