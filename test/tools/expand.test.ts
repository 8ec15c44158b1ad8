import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "../../src/errors.js";
import { expandTool, type ExpandedTool } from "../../src/tools/expand.js";
import { ToolDefinitionSchema } from "../../src/tools/schema.js";
import { thrownMessage } from "../support/thrown.js";

function expandYaml(yamlText: string): ExpandedTool[] {
  const document = parseYaml(yamlText) as { tools: unknown[] };
  return document.tools.map((tool, index) => expandTool(ToolDefinitionSchema.parse(tool), { file: "agent.yaml", path: `tools[${index}]` }));
}

function expandOne(yamlText: string): ExpandedTool {
  const [tool] = expandYaml(yamlText);
  if (!tool) throw new Error("no tool");
  return tool;
}

function expansionError(yamlText: string): string {
  return thrownMessage(() => expandYaml(yamlText), ConfigError);
}

describe("exec: mode", () => {
  it("tokenizes the spec's list_files into argv with one placeholder slot", () => {
    const tool = expandOne(`
tools:
  - name: list_files
    description: "List files in directory"
    exec: "ls -la \${directory}"
`);
    expect(tool.mode).toBe("exec");
    expect(tool.argv).toEqual([{ literal: "ls" }, { literal: "-la" }, { param: "directory" }]);
    // `-la` might take an argument, as far as the template can tell: a leading dash is let through as its value.
    expect(tool.parameters).toEqual([{ name: "directory", type: "string", required: true, inject_as: "argument", position: 0, raw: false, leading_dash: { refused: false, because: "the argument of -la in the template" } }]);
  });

  it("keeps the spaces of a quoted static argument (search_pattern)", () => {
    const tool = expandOne(`
tools:
  - name: search_pattern
    exec: 'grep "fixed pattern" \${file}'
`);
    expect(tool.argv).toEqual([{ literal: "grep" }, { literal: "fixed pattern" }, { param: "file" }]);
  });

  it("supports escaped quotes inside static strings", () => {
    const tool = expandOne(String.raw`
tools:
  - name: quoted
    exec: 'echo "say \"hi\"" it\''s'
`);
    expect(tool.argv).toEqual([{ literal: "echo" }, { literal: 'say "hi"' }, { literal: "it's" }]);
  });

  it("numbers several placeholders by order of first appearance", () => {
    const tool = expandOne(`
tools:
  - name: two_dirs
    exec: "ls -la \${dir1} \${dir2} \${dir1}"
`);
    expect(tool.argv).toEqual([{ literal: "ls" }, { literal: "-la" }, { param: "dir1" }, { param: "dir2" }, { param: "dir1" }]);
    expect(tool.parameters.map((p) => [p.name, p.position])).toEqual([["dir1", 0], ["dir2", 1]]);
  });

  it.each([
    ["cat ${file} | wc -l", "|"],
    ["echo hi > ${file}", ">"],
    ["sort < ${file}", "<"],
    ["sleep 1 &", "&"],
    ["echo a; echo ${b}", ";"],
    ["make && echo ${x}", "&&"],
    ["false || echo ${x}", "||"],
    ["(cd ${dir})", "("],
    ["ls *.log", "*"],
    ["echo hi # comment", "#"],
  ])("refuses the shell metacharacter in exec %j", (template, char) => {
    const message = expansionError(`tools:\n  - name: bad\n    exec: ${JSON.stringify(template)}\n`);
    expect(message).toContain(`Shell metacharacter '${char}' not allowed in exec: mode. Use shell: mode instead.`);
    expect(message).toContain("agent.yaml: tools[0].exec");
    expect(message).toContain("tool 'bad'");
  });

  it("refuses :raw in exec mode", () => {
    expect(expansionError("tools:\n  - name: r\n    exec: 'ls ${p:raw}'\n")).toContain(":raw is only valid in shell: mode");
  });

  it.each(["cat --file=${f}", "echo a${x}b", 'echo "prefix ${x}"'])("refuses a placeholder mixed with text in %j", (template) => {
    const message = expansionError(`tools:\n  - name: m\n    exec: ${JSON.stringify(template)}\n`);
    expect(message).toContain("must be a whole word");
    expect(message).toContain("shell: mode");
    expect(message).toContain("inject_as: option");
  });

  it("refuses environment variables, which only a shell would expand", () => {
    expect(expansionError("tools:\n  - name: e\n    exec: 'echo $HOME'\n")).toContain("'$HOME' would need a shell");
  });

  it("refuses a placeholder as the program", () => {
    expect(expansionError("tools:\n  - name: p\n    exec: '${cmd} -x'\n")).toContain("program (first word) must be fixed");
  });

  it("keeps ${AGENT_HOME} and ${CWD} as literal text for bind time, even inside a word", () => {
    const tool = expandOne("tools:\n  - name: s\n    exec: '${AGENT_HOME}/tools/run.sh --out=${CWD}/out ${x}'\n");
    expect(tool.argv).toEqual([{ literal: "${AGENT_HOME}/tools/run.sh" }, { literal: "--out=${CWD}/out" }, { param: "x" }]);
    expect(tool.parameters.map((p) => p.name)).toEqual(["x"]);
  });

  it("refuses malformed placeholders", () => {
    expect(expansionError("tools:\n  - name: b\n    exec: 'ls ${a-b}'\n")).toContain("'${a-b}' is not a valid placeholder");
    expect(expansionError("tools:\n  - name: b\n    exec: 'ls ${abc'\n")).toContain("unterminated placeholder");
  });
});

describe("shell: mode", () => {
  it("expands the spec's count_lines exactly", () => {
    const tool = expandOne(`
tools:
  - name: count_lines
    description: "Count lines in file"
    shell: "cat \${file} | wc -l"
`);
    expect(tool.argv).toEqual([{ literal: "sh" }, { literal: "-c" }, { literal: 'cat "$1" | wc -l' }, { literal: "--" }, { param: "file" }]);
    expect(tool.parameters).toEqual([{ name: "file", type: "string", required: true, inject_as: "argument", position: 0, raw: false, leading_dash: { refused: true } }]);
  });

  it("expands the spec's count_matches with two positions", () => {
    const tool = expandOne(`
tools:
  - name: count_matches
    shell: "grep \${pattern} \${file} | wc -l"
`);
    expect(tool.argv.slice(0, 4)).toEqual([{ literal: "sh" }, { literal: "-c" }, { literal: 'grep "$1" "$2" | wc -l' }, { literal: "--" }]);
    expect(tool.parameters.map((p) => [p.name, p.position])).toEqual([["pattern", 0], ["file", 1]]);
  });

  it("leaves :raw parameters unquoted (run_docker, list_logs)", () => {
    const [docker, logs] = expandYaml(`
tools:
  - name: run_docker
    shell: "docker run \${options:raw} \${image}"
  - name: list_logs
    shell: "ls \${pattern:raw}"
`);
    expect(docker?.argv[2]).toEqual({ literal: 'docker run $1 "$2"' });
    expect(docker?.parameters.map((p) => [p.name, p.raw])).toEqual([["options", true], ["image", false]]);
    expect(logs?.argv[2]).toEqual({ literal: "ls $1" });
  });

  it("reuses the number of a parameter used twice", () => {
    const tool = expandOne("tools:\n  - name: t\n    shell: 'cp ${f} ${f}.bak && echo ${g}'\n");
    expect(tool.argv[2]).toEqual({ literal: 'cp "$1" "$1".bak && echo "$2"' });
  });

  it("quotes correctly inside double quotes, single quotes and command substitution", () => {
    const tool = expandOne(`tools:\n  - name: q\n    shell: ${JSON.stringify(`echo "a \${x}" 'b \${x}' "$(cat \${y})"`)}\n`);
    expect(tool.argv[2]).toEqual({ literal: `echo "a $1" 'b '"$1"'' "$(cat "$2")"` });
  });

  it("writes ${10} for the tenth parameter so sh does not read $1 then 0", () => {
    const names = Array.from({ length: 10 }, (_, i) => `p${i}`);
    const tool = expandOne(`tools:\n  - name: many\n    shell: 'echo ${names.map((n) => `\${${n}}`).join(" ")}'\n`);
    expect(tool.argv[2]).toEqual({ literal: `echo ${names.map((_, i) => (i < 9 ? `"$${i + 1}"` : `"\${${i + 1}}"`)).join(" ")}` });
  });

  it("passes ${AGENT_HOME} as a positional literal rather than pasting the path into the script", () => {
    const tool = expandOne("tools:\n  - name: h\n    shell: '${AGENT_HOME}/run.sh ${x} | head'\n");
    expect(tool.argv).toEqual([
      { literal: "sh" },
      { literal: "-c" },
      { literal: '"$1"/run.sh "$2" | head' },
      { literal: "--" },
      { literal: "${AGENT_HOME}" },
      { param: "x" },
    ]);
    expect(tool.parameters).toEqual([expect.objectContaining({ name: "x", position: 1 })]);
  });

  it("refuses mixing raw and quoted uses of one parameter", () => {
    expect(expansionError("tools:\n  - name: t\n    shell: 'ls ${a} ${a:raw}'\n")).toContain("both with and without :raw");
  });

  it("refuses an unterminated quote", () => {
    expect(expansionError(`tools:\n  - name: t\n    shell: ${JSON.stringify('echo "abc ${x}')}\n`)).toContain("unterminated");
  });
});

describe("stdin and explicit parameters", () => {
  it("turns the stdin shorthand into a stdin parameter (write_file)", () => {
    const tool = expandOne(`
tools:
  - name: write_file
    description: "Write content to file"
    exec: "tee \${filename}"
    stdin: content
`);
    expect(tool.argv).toEqual([{ literal: "tee" }, { param: "filename" }]);
    expect(tool.parameters).toEqual([
      { name: "filename", type: "string", required: true, inject_as: "argument", position: 0, raw: false, leading_dash: { refused: true } },
      { name: "content", type: "string", required: true, inject_as: "stdin", raw: false, leading_dash: { refused: false, because: "stdin" } },
    ]);
  });

  it("refuses a stdin parameter that also appears in the template", () => {
    expect(expansionError("tools:\n  - name: t\n    exec: 'tee ${c}'\n    stdin: c\n")).toContain("cannot also appear");
  });

  it("merges descriptions and defaults from an explicit block (search_tool)", () => {
    const tool = expandOne(`
tools:
  - name: search_tool
    exec: "grep \${pattern} \${file}"
    parameters:
      - name: file
        description: "File to search in"
        default: "./data.txt"
      - name: pattern
        description: "Search pattern (regex)"
`);
    expect(tool.parameters).toEqual([
      { name: "pattern", type: "string", required: true, inject_as: "argument", position: 0, raw: false, leading_dash: { refused: true }, description: "Search pattern (regex)" },
      { name: "file", type: "string", required: true, inject_as: "argument", position: 1, raw: false, leading_dash: { refused: true }, description: "File to search in", default: "./data.txt" },
    ]);
  });

  it("refuses changing inject_as with the spec's message (bad_tool)", () => {
    const message = expansionError(`
tools:
  - name: bad_tool
    shell: "cat \${file} | wc -l"
    parameters:
      - name: file
        inject_as: stdin
`);
    expect(message).toContain("Cannot override inject_as for parameter 'file' (inferred: argument, explicit: stdin)");
    expect(message).toContain("agent.yaml: tools[0].parameters[0]");
  });

  it("refuses changing position or raw", () => {
    expect(expansionError("tools:\n  - name: t\n    exec: 'ls ${a}'\n    parameters:\n      - name: a\n        position: 3\n")).toContain(
      "Cannot override position for parameter 'a' (inferred: 0, explicit: 3)",
    );
    expect(expansionError("tools:\n  - name: t\n    shell: 'ls ${a}'\n    parameters:\n      - name: a\n        raw: true\n")).toContain(
      "Cannot override raw for parameter 'a'",
    );
  });

  it("refuses an explicit entry for a name the template does not use", () => {
    expect(expansionError("tools:\n  - name: t\n    exec: 'ls ${a}'\n    parameters:\n      - name: x\n")).toContain(
      "Parameter 'x' is not used in the template",
    );
  });

  it("names a misspelt placeholder and the parameter it was meant for", () => {
    expect(expansionError("tools:\n  - name: cat\n    exec: 'cat -- ${pathh}'\n    parameters:\n      - name: path\n        type: string\n")).toContain(
      "Parameter 'path' is not used in the template, which has ${pathh} instead: did you mean ${path}? Write the same name in both places",
    );
  });

  it("refuses a user tool named ask_human", () => {
    expect(expansionError("tools:\n  - name: ask_human\n    exec: 'echo hi'\n")).toContain("'ask_human' is a built-in tool");
  });

  it("defaults the description to the template", () => {
    expect(expandOne("tools:\n  - name: t\n    exec: 'ls ${a}'\n").description).toBe("Run `ls ${a}`");
  });
});

describe("command: mode", () => {
  it("appends the spec's v1.1 list_files argument after the command", () => {
    const tool = expandOne(`
tools:
  - name: list_files
    description: "List files in directory"
    command: ["ls", "-la"]
    parameters:
      - name: directory
        type: string
        description: "Target directory"
        required: false
        inject_as: argument
`);
    expect(tool.mode).toBe("command");
    expect(tool.argv).toEqual([{ literal: "ls" }, { literal: "-la" }, { param: "directory" }]);
    expect(tool.parameters[0]).toMatchObject({ name: "directory", required: false, position: 0 });
  });

  it("puts options before arguments ordered by position, and stdin outside argv", () => {
    const tool = expandOne(`
tools:
  - name: serve
    command: ["server", "\${x}"]
    stdin: body
    parameters:
      - { name: second, position: 1 }
      - { name: port, inject_as: option, option_name: --port }
      - { name: first, position: 0 }
`);
    expect(tool.argv).toEqual([{ literal: "server" }, { literal: "${x}" }, { param: "port" }, { param: "first" }, { param: "second" }]);
    expect(tool.parameters.find((p) => p.name === "body")?.inject_as).toBe("stdin");
  });

  it("requires option_name for an option and at most one stdin parameter", () => {
    expect(expansionError("tools:\n  - name: t\n    command: [a]\n    parameters:\n      - { name: p, inject_as: option }\n")).toContain("needs option_name");
    expect(
      expansionError("tools:\n  - name: t\n    command: [a]\n    parameters:\n      - { name: p, inject_as: stdin }\n      - { name: q, inject_as: stdin }\n"),
    ).toContain("at most one parameter may use inject_as: stdin");
  });
});

describe("tool definition schema", () => {
  it("refuses unknown keys such as a typo of exec", () => {
    const result = ToolDefinitionSchema.safeParse({ name: "t", exce: "ls" });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain("exce");
  });

  it("refuses two modes at once and names outside the OpenAI rule", () => {
    expect(ToolDefinitionSchema.safeParse({ name: "t", exec: "ls", shell: "ls" }).error?.issues[0]?.message).toBe(
      "Tool must specify exactly one of: exec, shell, or command",
    );
    expect(ToolDefinitionSchema.safeParse({ name: "has space", exec: "ls" }).error?.issues[0]?.message).toContain("OpenAI function-name rule");
  });
});
