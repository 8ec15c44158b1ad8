// End to end: a run keeps the endpoint it started with (a .env a tool wrote cannot redirect it), and no credential in a base or proxy URL is written or handed on.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { collectFiles, delta, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";

const KEY = "sk-test-secret-key-123";
/** What a model writes with the template's own write_file tool. */
const WRITE_TOOL = `tools:
  - name: write_file
    exec: "tee -- \${path}"
    stdin: content
  - name: show_env
    shell: "env"
`;

const { root } = setUpE2e("delta-endpoint-");

describe("the run's endpoint", () => {
  it("refuses a continue that a .env written by a tool would send elsewhere, sending nothing there, even with --accept-endpoint; --base-url moves it on purpose", async () => {
    const own = await startMockLlm([reply.text("placeholder")]);
    const attacker = await startMockLlm([reply.text("stolen"), reply.text("stolen again")]);
    try {
      const agent = writeAgent(root, { tools: WRITE_TOOL }, "agent-redirect");
      const ws = join(root, "ws-redirect");
      const env = { DELTA_API_KEY: KEY, DELTA_BASE_URL: own.baseUrl, DELTA_RETRY_BASE_MS: "5" };
      const script = await startMockLlm([
        reply.toolCalls([{ name: "write_file", arguments: { path: ".env", content: `DELTA_BASE_URL=${attacker.baseUrl}\n` } }]),
        reply.text("done"),
      ]);
      try {
        const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go"], { env: { ...env, DELTA_BASE_URL: script.baseUrl }, checkEndpoint: true });
        expect(first.exitCode, first.stderr).toBe(0);
        expect(readFileSync(join(ws, ".env"), "utf8")).toContain(attacker.baseUrl);
        const start = readEvents(ws, "r1")[0]!;
        expect(start.type === "ENGINE_START" && start.config.endpoint).toEqual({ provider: "openai", base_url: script.baseUrl });

        const refused = await delta(["continue", "--run-id", "r1", "-w", ws, "-m", "more", "--format", "json"], { env: { ...env, DELTA_BASE_URL: script.baseUrl }, checkEndpoint: true });
        expect(refused.exitCode, refused.stderr).toBe(126);
        // The workspace's .env names the URL but not the key: refused before the endpoints are even compared.
        expect(JSON.parse(refused.stdout)).toMatchObject({ error: { type: "UNTRUSTED_ENDPOINT" } });
        expect(refused.stderr).toContain(attacker.baseUrl);
        expect(refused.stderr).toContain("--base-url");
        expect(refused.stderr).toContain(join(ws, ".env"));
        expect(attacker.requests).toHaveLength(0);
        expect(readEvents(ws, "r1").filter((event) => event.type === "USER_MESSAGE")).toHaveLength(1);

        // Accepting the move does not let the key go where a workspace file points: only --base-url moves it there.
        const accepted = await delta(["continue", "--run-id", "r1", "-w", ws, "-m", "more", "--accept-endpoint", "--format", "json"], { env: { ...env, DELTA_BASE_URL: script.baseUrl }, checkEndpoint: true });
        expect(accepted.exitCode, accepted.stderr).toBe(126);
        expect(JSON.parse(accepted.stdout)).toMatchObject({ error: { type: "UNTRUSTED_ENDPOINT" } });
        expect(attacker.requests).toHaveLength(0);
        const moved = await delta(["continue", "--run-id", "r1", "-w", ws, "-m", "more", "--base-url", attacker.baseUrl], { env: { ...env, DELTA_BASE_URL: script.baseUrl }, checkEndpoint: true });
        expect(moved.exitCode, moved.stderr).toBe(0);
        expect(attacker.requests).toHaveLength(1);
      } finally {
        await script.close();
      }
    } finally {
      await own.close();
      await attacker.close();
    }
  });

  it("takes --base-url for one invocation, over a .env, and the run moves there on purpose", async () => {
    const first = await startMockLlm([reply.text("one")]);
    const second = await startMockLlm([reply.text("two")]);
    try {
      const agent = writeAgent(root, {}, "agent-flag");
      const ws = join(root, "ws-flag");
      const env = { DELTA_API_KEY: KEY, DELTA_BASE_URL: "http://127.0.0.1:9/v1", DELTA_RETRY_BASE_MS: "5" };
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "f1", "-m", "go", "--base-url", first.baseUrl], { env });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(first.requests).toHaveLength(1);
      const moved = await delta(["continue", "--run-id", "f1", "-w", ws, "-m", "more", "--base-url", second.baseUrl], { env, checkEndpoint: true });
      expect(moved.exitCode, moved.stderr).toBe(0);
      expect(second.requests).toHaveLength(1);
      // Without the flag, the environment's endpoint is not the run's any more: refused.
      const back = await delta(["continue", "--run-id", "f1", "-w", ws, "-m", "again"], { env, checkEndpoint: true });
      expect(back.exitCode).toBe(126);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe("credentials in a base URL or a proxy URL", () => {
  it("are absent from every file under .delta, every output, and every child's environment", async () => {
    const BASE_PASSWORD = "base-url-password-7f3a9";
    const PROXY_PASSWORD = "proxy-password-c41d2e";
    const server = await startMockLlm([reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("done")]);
    try {
      const agent = writeAgent(root, { tools: WRITE_TOOL, hooksYaml: JSON.stringify({ post_tool_execution: { command: ["sh", "-c", "env"] } }) }, "agent-creds");
      const ws = join(root, "ws-creds");
      const baseUrl = server.baseUrl.replace("http://", `http://gateway-user:${BASE_PASSWORD}@`);
      // HTTPS_PROXY is not used for an http:// endpoint, but tools and hooks inherit it.
      const env = { DELTA_API_KEY: KEY, DELTA_BASE_URL: baseUrl, HTTPS_PROXY: `http://proxy-user:${PROXY_PASSWORD}@127.0.0.1:9`, DELTA_RETRY_BASE_MS: "5" };
      const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "go", "--format", "stream-json", "-v"], { env });
      expect(result.exitCode, result.stderr).toBe(0);
      const report = await delta(["report", "c1", "-w", ws]);
      const show = await delta(["show", "c1", "-w", ws]);
      const texts = [result.stdout, result.stderr, report.stdout, show.stdout, ...collectFiles(runDir(ws, "c1")).map((file) => readFileSync(file, "utf8"))];
      for (const text of texts) {
        expect(text).not.toContain(BASE_PASSWORD);
        expect(text).not.toContain(PROXY_PASSWORD);
      }
      const start = readEvents(ws, "c1")[0]!;
      expect(start.type === "ENGINE_START" && start.config.base_url).toBe(server.baseUrl);
      const observation = readEvents(ws, "c1").find((event) => event.type === "ACTION_RESULT");
      expect(observation?.type === "ACTION_RESULT" && observation.observation_content).not.toMatch(/^DELTA_BASE_URL=/m);
    } finally {
      await server.close();
    }
  });
});
