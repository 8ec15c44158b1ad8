// End to end: a workspace's .env (a file the run's tools can write) may redirect only its own key; the agent's and the project's .env keep their priority.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { delta, runDir, setUpE2e, writeAgent } from "./harness.js";

const USER_KEY = "sk-the-users-own-key-4471";
const WRITE_TOOL = `tools:
  - name: write_file
    exec: "tee -- \${path}"
    stdin: content
`;

const { root } = setUpE2e("delta-workspace-env-");

function authorizations(requests: { headers: Record<string, string | string[] | undefined> }[]): string[] {
  return requests.map((request) => String(request.headers.authorization));
}

describe("a base URL from the workspace's .env", () => {
  it("is refused (126) for a new run whose key comes from elsewhere, naming the file and the three fixes; the key is sent nowhere", async () => {
    const own = await startMockLlm([reply.toolCalls([{ name: "write_file", arguments: { path: ".env", content: "" } }]), reply.text("done")]);
    const attacker = await startMockLlm([reply.text("stolen")]);
    try {
      const agent = writeAgent(root, { tools: WRITE_TOOL }, "agent-new-run");
      const ws = join(root, "ws-new-run");
      const env = { DELTA_API_KEY: USER_KEY, DELTA_BASE_URL: own.baseUrl, DELTA_RETRY_BASE_MS: "5" };
      // A tool of an earlier run wrote the workspace's .env.
      const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "writer", "-m", "go"], { env });
      expect(first.exitCode, first.stderr).toBe(0);
      writeFileSync(join(ws, ".env"), `DELTA_BASE_URL=${attacker.baseUrl}\n`);
      const refused = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "next", "-m", "go", "--format", "json"], { env });
      expect(refused.exitCode, refused.stderr).toBe(126);
      expect(JSON.parse(refused.stdout)).toMatchObject({ status: "REFUSED", error: { type: "UNTRUSTED_ENDPOINT" } });
      const file = join(ws, ".env");
      expect(refused.stderr).toContain(`comes from ${file} (DELTA_BASE_URL), a file the run's tools can write`);
      expect(refused.stderr).toContain("DELTA_API_KEY from the environment");
      expect(refused.stderr).toContain(`put the key beside the URL in ${file}`);
      expect(refused.stderr).toContain("set DELTA_BASE_URL in the environment or the agent's .env");
      expect(refused.stderr).toContain("--base-url <url>");
      expect(refused.stderr).not.toContain(USER_KEY);
      expect(attacker.requests).toHaveLength(0);
      expect(existsSync(runDir(ws, "next"))).toBe(false);
      // Named on purpose for this invocation, the endpoint is used.
      const flagged = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "flagged", "-m", "go", "--base-url", attacker.baseUrl], { env });
      expect(flagged.exitCode, flagged.stderr).toBe(0);
      expect(authorizations(attacker.requests)).toEqual([`Bearer ${USER_KEY}`]);
    } finally {
      await own.close();
      await attacker.close();
    }
  });

  it("is used with the key beside it in the same file (a workspace set up for its own server)", async () => {
    const local = await startMockLlm([reply.text("set up"), reply.text("local answer")]);
    try {
      const agent = writeAgent(root, {}, "agent-own-key");
      const ws = join(root, "ws-own-key");
      const run0 = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "setup", "-m", "go"], { env: { DELTA_API_KEY: USER_KEY, DELTA_BASE_URL: local.baseUrl } });
      expect(run0.exitCode, run0.stderr).toBe(0);
      writeFileSync(join(ws, ".env"), `DELTA_BASE_URL=${local.baseUrl}\nDELTA_API_KEY=workspace-key-for-local\n`);
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "local", "-m", "go"], { env: { DELTA_API_KEY: USER_KEY, DELTA_RETRY_BASE_MS: "5" } });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(authorizations(local.requests).at(-1)).toBe("Bearer workspace-key-for-local");
      expect(run.stderr).toContain(`Model endpoint ${local.baseUrl} (openai): base URL from ${join(ws, ".env")}; API key from ${join(ws, ".env")}`);
    } finally {
      await local.close();
    }
  });

  it("the agent's .env keeps the design's priority: its base URL is used with the key from the environment", async () => {
    const server = await startMockLlm([reply.text("agent endpoint")]);
    try {
      const agent = writeAgent(root, { files: { ".env": `DELTA_BASE_URL=${server.baseUrl}\n` } }, "agent-own-env");
      const run = await delta(["run", "--agent", agent, "-w", join(root, "ws-agent-env"), "--run-id", "a", "-m", "go"], { env: { DELTA_API_KEY: USER_KEY, DELTA_BASE_URL: "http://127.0.0.1:9/v1" } });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(authorizations(server.requests)).toEqual([`Bearer ${USER_KEY}`]);
    } finally {
      await server.close();
    }
  });
});
