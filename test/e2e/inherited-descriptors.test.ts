// End to end: a descriptor the engine's caller left open (`exec 200<dir`) reaches none of its children — tools, hooks, generators: each finds /dev/null at that number.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, DELTA_BIN, modelEnv, NO_MODEL_KEYS, removeDir, tempDir, writeAgent } from "./harness.js";

let root: string;
beforeAll(() => {
  root = tempDir("delta-inherited-fds-");
});
afterAll(() => removeDir(root));

const PROBE = 'readlink /proc/self/fd/200; (echo planted > /proc/self/fd/200/planted) 2>/dev/null && echo wrote || echo "could not write"';

describe("a descriptor the caller left open", () => {
  it("is /dev/null in a tool and a hook, and nothing is written through it", async () => {
    const server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script: PROBE } }]), reply.text("done")]);
    const hooks = `post_tool_execution:\n  command: [sh, -c, '(${PROBE}) > hook-saw.txt']\n`;
    const agent = writeAgent(root, { agentYaml: 'name: fds\nllm:\n  model: mock-model\ntools:\n  - name: run\n    exec: "sh -c ${script}"\n', hooksYaml: hooks });
    const ws = join(root, "ws");
    mkdirSync(join(ws, ".delta"), { recursive: true });
    const journalFolder = openSync(join(ws, ".delta"), "r");
    try {
      const stdio: (number | "ignore" | "pipe")[] = ["ignore", "pipe", "pipe", ...new Array<"ignore">(197).fill("ignore"), journalFolder];
      const child = spawn(process.execPath, [DELTA_BIN, "run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go"], { env: { ...process.env, ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl) }, stdio });
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout!.resume();
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, stderr).toBe(0);
      const [result] = actionResults(ws, "r1");
      expect(result!.observation_content).toBe("/dev/null\ncould not write\n");
      expect(readFileSync(join(ws, "hook-saw.txt"), "utf8")).toBe("/dev/null\ncould not write\n");
      expect(existsSync(join(ws, ".delta", "planted"))).toBe(false);
    } finally {
      closeSync(journalFolder);
      await server.close();
    }
  }, 60_000);
});
