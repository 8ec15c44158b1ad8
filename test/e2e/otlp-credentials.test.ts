// End to end: a user:password@ in the OTLP endpoint is a secret like the exporter's headers: it reaches the collector and nowhere else.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { startOtlpCollector } from "../support/otlp-collector.js";
import { collectFiles, delta, modelEnv, readEvents, runDir, setUpE2e, writeAgent } from "./harness.js";

const PASSWORD = "otlp-endpoint-password-5c81e";
const TOOLS = `tools:
  - name: show_env
    shell: "env"
`;

const { root } = setUpE2e("delta-otlp-creds-");

describe("credentials in OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("authenticate the export, and are absent from the tool's and the hook's environment, the journal, io/, stdout and stderr", async () => {
    const collector = await startOtlpCollector();
    // The model repeats the password, as a model that saw it somewhere might.
    const server = await startMockLlm([reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text(`done; the password was ${PASSWORD}`)]);
    try {
      const agent = writeAgent(root, { tools: TOOLS, hooksYaml: JSON.stringify({ post_tool_execution: { command: ["sh", "-c", "env"] } }) }, "agent-creds");
      const ws = join(root, "ws-creds");
      const endpoint = collector.endpoint.replace("http://", `http://collector-user:${PASSWORD}@`);
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "creds", "-m", "go", "--format", "json"], {
        env: modelEnv(server.baseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` }),
        timeoutMs: 60_000,
      });
      expect(run.exitCode, run.stderr).toBe(0);
      // The collector was reached with them: the export still authenticates.
      expect(collector.exports.length).toBeGreaterThan(0);
      expect(collector.exports[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`collector-user:${PASSWORD}`).toString("base64")}`);
      expect(run.stdout).not.toContain(PASSWORD);
      expect(run.stderr).not.toContain(PASSWORD);
      const observation = readEvents(ws, "creds").find((event) => event.type === "ACTION_RESULT");
      expect(observation?.type === "ACTION_RESULT" && observation.observation_content).toMatch(/^PATH=/m);
      expect(observation?.type === "ACTION_RESULT" && observation.observation_content).not.toMatch(/^OTEL_EXPORTER_OTLP_(TRACES_)?ENDPOINT=/m);
      const files = collectFiles(runDir(ws, "creds"));
      expect(files.some((file) => file.includes(join("io", "hooks")))).toBe(true);
      for (const file of files) expect(readFileSync(file, "utf8"), file).not.toContain(PASSWORD);
      expect(JSON.stringify(collector.spans())).not.toContain(PASSWORD);
    } finally {
      await server.close();
      await collector.close();
    }
  }, 60_000);

  it("an endpoint without credentials still reaches a tool, so a delta it starts joins the trace", async () => {
    const server = await startMockLlm([reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("done")]);
    const collector = await startOtlpCollector();
    try {
      const agent = writeAgent(root, { tools: TOOLS }, "agent-plain");
      const ws = join(root, "ws-plain");
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "plain", "-m", "go"], { env: modelEnv(server.baseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }), timeoutMs: 60_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      const observation = readEvents(ws, "plain").find((event) => event.type === "ACTION_RESULT");
      expect(observation?.type === "ACTION_RESULT" && observation.observation_content).toContain(`OTEL_EXPORTER_OTLP_ENDPOINT=${collector.endpoint}`);
    } finally {
      await server.close();
      await collector.close();
    }
  }, 60_000);

  it("a collector that refuses is named without them, on stderr and in engine.log", async () => {
    const collector = await startOtlpCollector("unavailable");
    const server = await startMockLlm([reply.text("done")]);
    try {
      const agent = writeAgent(root, {}, "agent-refused");
      const ws = join(root, "ws-refused");
      const endpoint = collector.endpoint.replace("http://", `http://collector-user:${PASSWORD}@`);
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "refused", "-m", "go"], { env: modelEnv(server.baseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "2000" }), timeoutMs: 60_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toContain("could not export the run's spans to http://***@127.0.0.1:");
      expect(run.stderr).not.toContain(PASSWORD);
      for (const file of collectFiles(runDir(ws, "refused"))) expect(readFileSync(file, "utf8"), file).not.toContain(PASSWORD);
      const exported = await delta(["export", "refused", "-w", ws, "--otlp", "--endpoint", endpoint], { env: { OTEL_EXPORTER_OTLP_TIMEOUT: "1000" } });
      expect(exported.exitCode).toBe(1);
      expect(exported.stderr).toContain("http://***@127.0.0.1:");
      expect(exported.stderr).not.toContain(PASSWORD);
    } finally {
      await server.close();
      await collector.close();
    }
  }, 60_000);
});
