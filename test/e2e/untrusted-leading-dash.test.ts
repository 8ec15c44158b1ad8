// End to end: a model's value that starts with "-" is not an option: the templates put `--` before values, and a path parameter refuses a leading dash.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, delta, modelEnv, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-dash-");

describe("values that look like options", () => {
  it("--files0-from= given to the hello-world template's tool is an ERROR observation, and nothing runs", async () => {
    const made = await delta(["init", "dash-agent", "-t", "hello-world", "-y"], { cwd: root });
    expect(made.exitCode, made.stderr).toBe(0);
    const ws = join(root, "ws");
    const outside = join(root, "outside-secret.txt");
    writeFileSync(outside, "a secret line\n");
    const server = await startMockLlm([
      reply.toolCalls([
        { id: "c1", name: "count_lines", arguments: { path: `--files0-from=${outside}` } },
        { id: "c2", name: "write_file", arguments: { path: "--version", content: "x" } },
        { id: "c3", name: "read_file", arguments: { path: "-" } },
        { id: "c4", name: "write_file", arguments: { path: "notes.txt", content: "kept\n" } },
      ]),
      reply.text("done"),
    ]);
    try {
      const run = await delta(["run", "--agent", join(root, "dash-agent"), "-w", ws, "--run-id", "d1", "-m", "go"], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(0);
      const results = actionResults(ws, "d1");
      for (const result of results.slice(0, 3)) {
        expect(result.status, result.observation_content).toBe("ERROR");
        expect(result.observation_content).toContain('must not start with "-"');
        expect(result.observation_content).not.toContain("a secret line");
      }
      expect(results[3]).toMatchObject({ status: "SUCCESS" });
      expect(existsSync(join(ws, "--version"))).toBe(false);
      // `--` in the template: a value cannot end the options early either.
      const expanded = await delta(["tool", "expand", join(root, "dash-agent")]);
      expect(expanded.stdout).toContain("- cat\n      - --\n");
      expect(expanded.stdout).toContain("reject_leading_dash: true");
    } finally {
      await server.close();
    }
  });
});
