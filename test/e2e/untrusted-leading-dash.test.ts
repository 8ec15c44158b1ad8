// End to end: a model's value that starts with "-" is not an option by default: refused where it would stand as an argument of its own, passed where the template guards it.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, delta, modelEnv, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-dash-");

describe("values that look like options", () => {
  it("`sort ${file}` in a user's agent, given --output=<a file outside the workspace>, is an ERROR observation and the file is untouched", async () => {
    const victim = join(root, "victim.txt");
    writeFileSync(victim, "precious line\n");
    const agent = writeAgent(root, { tools: 'tools:\n  - name: sort_file\n    exec: "sort ${file}"\n' }, "agent-sort");
    const ws = join(root, "ws-sort");
    const server = await startMockLlm([
      reply.toolCalls([
        { id: "c1", name: "sort_file", arguments: { file: `--output=${victim}` } },
        { id: "c2", name: "sort_file", arguments: { file: "-o" } },
      ]),
      reply.text("done"),
    ]);
    try {
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "sorted", "-m", "go"], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      const results = actionResults(ws, "sorted");
      expect(results.map((result) => result.status)).toEqual(["ERROR", "ERROR"]);
      expect(results[0]!.observation_content).toContain(`Parameter 'file' of 'sort_file' must not start with "-" (the program would read "--output=${victim.slice(0, 31)}" as an option)`);
      expect(readFileSync(victim, "utf8")).toBe("precious line\n");
    } finally {
      await server.close();
    }
  });

  it("the hello-world template guards its paths with --: an option-like path is a file name there, never an option", async () => {
    const made = await delta(["init", "dash-agent", "-t", "hello-world", "-y"], { cwd: root });
    expect(made.exitCode, made.stderr).toBe(0);
    const ws = join(root, "ws");
    const outside = join(root, "outside-secret.txt");
    writeFileSync(outside, "a secret line\n");
    const server = await startMockLlm([
      reply.toolCalls([
        { id: "c1", name: "count_lines", arguments: { path: `--files0-from=${outside}` } },
        { id: "c2", name: "write_file", arguments: { path: "--version", content: "x" } },
        { id: "c3", name: "write_file", arguments: { path: "notes.txt", content: "kept\n" } },
      ]),
      reply.text("done"),
    ]);
    try {
      const run = await delta(["run", "--agent", join(root, "dash-agent"), "-w", ws, "--run-id", "d1", "-m", "go"], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).not.toContain("DEPRECATION");
      const results = actionResults(ws, "d1");
      // cat read no file list: after `--` the value is a file name, which does not exist.
      expect(results[0]!.observation_content).toContain(`cat: '--files0-from=${outside}': No such file or directory`);
      expect(results[0]!.observation_content).not.toContain("a secret line");
      // tee wrote a file of that name in the workspace, as it would any name.
      expect(readFileSync(join(ws, "--version"), "utf8")).toBe("x");
      expect(results[2]).toMatchObject({ status: "SUCCESS" });
      const expanded = await delta(["tool", "expand", join(root, "dash-agent")]);
      expect(expanded.stdout).toContain("leading_dash: \"allowed: after -- in the template\"");
    } finally {
      await server.close();
    }
  });

  it("an agent that still writes reject_leading_dash loads, with a deprecation note naming the field and the fix", async () => {
    const agent = writeAgent(root, { tools: 'tools:\n  - name: show\n    exec: "cat ${path}"\n    parameters:\n      - name: path\n        reject_leading_dash: true\n' }, "agent-old-key");
    const server = await startMockLlm([reply.toolCalls([{ name: "show", arguments: { path: "-n" } }]), reply.text("done")]);
    try {
      const ws = join(root, "ws-old-key");
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "old", "-m", "go"], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toContain("agent.yaml: tools[0].parameters[0].reject_leading_dash (tool 'show'): a value starting with \"-\" that would stand as an argument of its own is refused by default now");
      expect(actionResults(ws, "old")[0]).toMatchObject({ status: "ERROR" });
      expect(existsSync(join(ws, "-n"))).toBe(false);
    } finally {
      await server.close();
    }
  });
});
