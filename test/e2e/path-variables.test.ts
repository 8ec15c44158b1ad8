// End to end: ${CWD} and ${AGENT_HOME} reach shell scripts as variables, never as script text, whatever the paths hold.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, collectFiles, delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-path-variables-");

/** The same script in each place that takes an argv: the legacy command: form, exec:, a hook, a generator. */
const SCRIPT = "echo ${CWD}; echo \"home=${AGENT_HOME}\"";
const TOOLS = `tools:
  - name: where_command
    command: ["sh", "-c", ${JSON.stringify(SCRIPT)}]
  - name: where_exec
    exec: "sh -c '${SCRIPT.replaceAll('"', '\\"')}'"
`;
const HOOKS = JSON.stringify({ pre_tool_execution: { command: ["sh", "-c", `(${SCRIPT}) >> hook.txt`] } });
const CONTEXT = `sources:
  - type: file
    path: '\${AGENT_HOME}/system_prompt.md'
  - type: computed_file
    generator:
      command: ${JSON.stringify(["sh", "-c", `(${SCRIPT}) > generator.txt`])}
    output_path: '\${CWD}/generator.txt'
  - type: journal
`;

describe.concurrent("path variables in shell scripts", () => {
  for (const [name, hostile] of [
    ["semicolons", ";touch PWNED;x"],
    ["command substitution", "$(touch PWNED)"],
  ] as const) {
    it(`run nothing from a workspace and agent path holding ${name}, and the scripts still see both paths`, async () => {
      const server = await startMockLlm([
        reply.toolCalls([
          { name: "where_command", arguments: {} },
          { name: "where_exec", arguments: {} },
        ]),
        reply.text("done"),
      ]);
      try {
        const caseRoot = join(root, name.replaceAll(" ", "-"));
        const agent = writeAgent(caseRoot, { tools: TOOLS, hooksYaml: HOOKS, contextYaml: CONTEXT }, `agent${hostile}`);
        const ws = join(caseRoot, `ws${hostile}`);
        const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "paths", "-m", "where am I"], { env: modelEnv(server.baseUrl) });
        expect(result.exitCode, result.stderr).toBe(0);

        const expected = `${ws}\nhome=${agent}\n`;
        expect(actionResults(ws, "paths").map((event) => [event.status, event.observation_content])).toEqual([
          ["SUCCESS", expected],
          ["SUCCESS", expected],
        ]);
        expect(readFileSync(join(ws, "hook.txt"), "utf8")).toBe(expected.repeat(2));
        expect(readFileSync(join(ws, "generator.txt"), "utf8")).toBe(expected);
        expect(collectFiles(caseRoot).filter((file) => file.endsWith("PWNED"))).toEqual([]);
        expect(existsSync(join(process.cwd(), "PWNED"))).toBe(false);
      } finally {
        await server.close();
      }
    });
  }
});
