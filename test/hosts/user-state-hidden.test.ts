// On a real machine: the user's state folder, where `delta mcp serve` keeps its token, is hidden from every box, so a boxed tool cannot read the token and call the server.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DELTA_BIN, NO_MODEL_KEYS, actionResults, delta, modelEnv, removeDir, tempDir, waitFor, writeAgent } from "../e2e/harness.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { requireBinary } from "../support/system-packages.js";

let root: string;
/** Outside /tmp, which every box replaces anyway: there the box shows the folder, as it shows a state folder under $HOME. */
let stateHome: string;
beforeAll(() => {
  requireBinary("bwrap");
  root = tempDir("delta-state-hidden-");
  stateHome = mkdtempSync("/var/tmp/delta-state-hidden-");
});
afterAll(() => {
  removeDir(root);
  removeDir(stateHome);
});

it("a boxed tool finds the state folder empty: the token mcp serve made there is not readable, whatever the mode", async () => {
  const agent = writeAgent(root, { agentYaml: 'name: boxed\nllm:\n  model: mock-model\nsandbox: {mode: workspace-write, network: on}\ntools:\n  - name: look\n    exec: "sh -c ${script}"\n' });
  // The server makes the token, and says where.
  const server = spawn(process.execPath, [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", join(root, "ws-serve"), "--http", "0"], {
    env: { ...process.env, ...NO_MODEL_KEYS, XDG_STATE_HOME: stateHome },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  server.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  try {
    await waitFor(() => /listening on/.test(stderr), 20_000, "the server to listen");
  } finally {
    server.kill("SIGTERM");
  }
  const tokenFile = join(stateHome, "delta", "mcp-token");
  const token = readFileSync(tokenFile, "utf8").trim();
  const llm = await startMockLlm([reply.toolCalls([{ name: "look", arguments: { script: `ls -a ${join(stateHome, "delta")}; cat ${tokenFile}` } }]), reply.text("done")]);
  try {
    const ws = join(root, "ws-run");
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "look", "-m", "go"], { env: modelEnv(llm.baseUrl, { XDG_STATE_HOME: stateHome }) });
    expect(run.exitCode, run.stderr).toBe(0);
    const [result] = actionResults(ws, "look");
    expect(result!.observation_content).toContain("No such file or directory");
    expect(result!.observation_content).not.toContain(token);
    // The folder is there, empty: `ls -a` lists only . and ..
    expect(result!.observation_content).toMatch(/\[stdout\]\n\.\n\.\.\n\[stderr\]/);
  } finally {
    await llm.close();
  }
}, 90_000);
