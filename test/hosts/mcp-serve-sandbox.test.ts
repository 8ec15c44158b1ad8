// The agent's sandbox on every run `delta mcp serve` starts: a boxed tool writing outside the workspace fails as it does from the CLI.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELTA_BIN, NO_MODEL_KEYS, actionResults, delta, modelEnv, readEvents, removeDir, tempDir, waitFor, writeAgent } from "../e2e/harness.js";
import { messagesOf, reply, startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { requireBinary } from "../support/system-packages.js";

let llm: MockLlm;
let root: string;
let agent: string;
let outside: string;

beforeAll(async () => {
  requireBinary("bwrap");
  root = tempDir("delta-mcp-sandbox-");
  outside = join(root, "outside");
  mkdirSync(outside);
  // Each message starts with the path the tool writes to; the model calls the tool once per message, then reports.
  llm = await startMockLlm((request) => {
    const last = messagesOf(request).at(-1)!;
    return last.role === "user" ? reply.toolCalls([{ name: "write", arguments: { path: String(last.content).split(" ")[0]! } }]) : reply.text("reported");
  });
  agent = writeAgent(root, { agentYaml: 'name: boxed\nllm:\n  model: mock-model\nsandbox: {mode: workspace-write}\ntools:\n  - name: write\n    exec: "touch ${path}"\n' });
});
afterAll(async () => {
  await llm.close();
  removeDir(root);
});

const env = (): Record<string, string> => ({ ...process.env, ...NO_MODEL_KEYS, ...modelEnv(llm.baseUrl) }) as Record<string, string>;

async function connect(kind: "stdio" | "http", workDir: string): Promise<{ client: Client; close: () => Promise<void> }> {
  const client = new Client({ name: "t", version: "1" });
  if (kind === "stdio") {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir], env: env(), stderr: "ignore" }));
    return { client, close: () => client.close() };
  }
  const token = "mcp-sandbox-test-token-0c1d";
  const proc = spawn(process.execPath, [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir, "--http", "0"], { env: { ...env(), DELTA_MCP_TOKEN: token }, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  await waitFor(() => /listening on \S+/.test(stderr), 20_000, "the server to listen");
  const transport: Transport = new StreamableHTTPClientTransport(new URL(/listening on (\S+)/.exec(stderr)![1]!), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  return {
    client,
    close: async () => {
      await client.close();
      proc.kill("SIGTERM");
      await new Promise((resolve) => (proc.exitCode !== null ? resolve(null) : proc.once("exit", resolve)));
    },
  };
}

describe.each(["stdio", "http"] as const)("runs started by delta mcp serve over %s", (kind) => {
  it("are boxed by the agent's sandbox, for run and continue alike, as from the CLI", async () => {
    const workDir = tempDir("delta-mcp-sandbox-ws-");
    const target = join(outside, `${kind}.txt`);
    const served = await connect(kind, workDir);
    try {
      const first = (await served.client.callTool({ name: "run", arguments: { task: `${target} from run`, run_id: "served" } })) as { structuredContent?: Record<string, unknown> };
      expect(first.structuredContent, JSON.stringify(first.structuredContent)).toMatchObject({ status: "COMPLETED" });
      const again = (await served.client.callTool({ name: "continue", arguments: { run_id: "served", message: `${target} from continue` } })) as { structuredContent?: Record<string, unknown> };
      expect(again.structuredContent).toMatchObject({ status: "COMPLETED" });
      const inside = (await served.client.callTool({ name: "continue", arguments: { run_id: "served", message: "inside.txt" } })) as { structuredContent?: Record<string, unknown> };
      expect(inside.structuredContent).toMatchObject({ status: "COMPLETED" });
    } finally {
      await served.close();
    }
    const results = actionResults(workDir, "served");
    expect(results.map((result) => result.status)).toEqual(["FAILED", "FAILED", "SUCCESS"]);
    // The host's /tmp, where the target lives, is not the box's.
    expect(results[0]!.observation_content).toMatch(/Read-only file system|No such file or directory/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(workDir, "inside.txt"))).toBe(true);
    const starts = readEvents(workDir, "served").filter((event) => event.type === "ENGINE_START");
    expect(starts).toHaveLength(3);
    for (const start of starts) expect(start.type === "ENGINE_START" && start.config.sandbox).toMatchObject({ agent: { mode: "workspace-write" } });

    // The same write from the CLI fails the same way.
    const cliWorkDir = tempDir("delta-mcp-sandbox-cli-");
    const cli = await delta(["run", "--agent", agent, "-w", cliWorkDir, "--run-id", "cli", "-y", "-m", `${target} from the cli`, "--format", "json"], { env: modelEnv(llm.baseUrl), timeoutMs: 60_000 });
    expect(cli.exitCode).toBe(0);
    const [fromCli] = actionResults(cliWorkDir, "cli");
    expect(fromCli).toMatchObject({ status: results[0]!.status, observation_content: results[0]!.observation_content });
    expect(existsSync(target)).toBe(false);
  }, 120_000);
});
