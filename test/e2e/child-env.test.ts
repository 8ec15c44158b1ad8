// End to end: tools, hooks and generators never see the engine's API key unless agent.yaml passes it on.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const KEY = "sk-test-secret-key-123";
const DOTENV_KEY = "sk-dotenv-secret-key-456";

const { root } = setUpE2e("delta-child-env-");

const TOOLS = `tools:
  - name: show_env
    shell: "env > tool.env"
`;

const CONTEXT = `sources:
  - type: file
    path: '\${AGENT_HOME}/system_prompt.md'
  - type: computed_file
    generator:
      command: ["sh", "-c", "env > generator.env; echo generated > generated.md"]
    output_path: '\${CWD}/generated.md'
  - type: journal
`;

const HOOKS = JSON.stringify({ pre_tool_execution: { command: ["sh", "-c", "env > hook.env"] } });

interface EnvCase {
  /** Lines of agent.yaml after the tools, e.g. env_passthrough. */
  extraYaml?: string;
  /** Variables of delta's own environment, beside DELTA_BASE_URL. */
  env: Record<string, string>;
  /** A .env file in the workspace. */
  dotEnv?: string;
}

/** Runs one tool call with a tool, a hook and a generator that each write their environment into the workspace. */
async function runEnvCase(name: string, spec: EnvCase): Promise<Record<"tool" | "hook" | "generator", Map<string, string>>> {
  const server = await startMockLlm([reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("done")]);
  try {
    const agent = writeAgent(root, { tools: TOOLS + (spec.extraYaml ?? ""), contextYaml: CONTEXT, hooksYaml: HOOKS }, `agent-${name}`);
    const ws = join(root, `ws-${name}`);
    mkdirSync(ws, { recursive: true });
    if (spec.dotEnv !== undefined) writeFileSync(join(ws, ".env"), spec.dotEnv);
    const { DELTA_BASE_URL, DELTA_RETRY_BASE_MS } = modelEnv(server.baseUrl);
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go"], { env: { DELTA_BASE_URL: DELTA_BASE_URL!, DELTA_RETRY_BASE_MS: DELTA_RETRY_BASE_MS!, ...spec.env } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(actionResults(ws, name)[0]).toMatchObject({ status: "SUCCESS" });
    return { tool: envFile(ws, "tool.env"), hook: envFile(ws, "hook.env"), generator: envFile(ws, "generator.env") };
  } finally {
    await server.close();
  }
}

function envFile(ws: string, file: string): Map<string, string> {
  const lines = readFileSync(join(ws, file), "utf8").split("\n");
  return new Map(lines.filter((line) => line.includes("=")).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
}

function valuesOf(env: Map<string, string>): string[] {
  return [...env.values()];
}

describe.concurrent("the environment of tools, hooks and generators", () => {
  it("lacks the API key that came from the environment, under any of the provider variables or another name", async () => {
    const seen = await runEnvCase("from-env", {
      env: { DELTA_API_KEY: KEY, OPENAI_API_KEY: "sk-openai-other", ANTHROPIC_API_KEY: "sk-ant-other", MY_COPY_OF_THE_KEY: KEY, UNRELATED: "kept" },
    });
    for (const env of Object.values(seen)) {
      for (const name of ["DELTA_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_COPY_OF_THE_KEY"]) expect(env.has(name), name).toBe(false);
      expect(valuesOf(env)).not.toContain(KEY);
      expect(env.get("UNRELATED")).toBe("kept");
      expect(env.get("DELTA_CWD")).toBeDefined();
    }
  });

  it("lacks the API key that came from a .env file", async () => {
    const seen = await runEnvCase("from-dotenv", { env: { DELTA_API_KEY: "" }, dotEnv: `DELTA_API_KEY=${DOTENV_KEY}\n` });
    for (const env of Object.values(seen)) {
      expect(env.get("DELTA_API_KEY") ?? "").toBe("");
      expect(valuesOf(env)).not.toContain(DOTENV_KEY);
    }
  });

  it("has the key when agent.yaml lists its variable in env_passthrough, from the environment", async () => {
    const seen = await runEnvCase("passthrough-env", { extraYaml: "env_passthrough: [DELTA_API_KEY]\n", env: { DELTA_API_KEY: KEY, OPENAI_API_KEY: "sk-openai-other" } });
    for (const env of Object.values(seen)) {
      expect(env.get("DELTA_API_KEY")).toBe(KEY);
      expect(env.has("OPENAI_API_KEY")).toBe(false);
    }
  });

  it("has the key when agent.yaml lists its variable in env_passthrough, from a .env file", async () => {
    const seen = await runEnvCase("passthrough-dotenv", { extraYaml: "env_passthrough: [DELTA_API_KEY]\n", env: { DELTA_API_KEY: "" }, dotEnv: `DELTA_API_KEY=${DOTENV_KEY}\n` });
    for (const env of Object.values(seen)) expect(env.get("DELTA_API_KEY")).toBe(DOTENV_KEY);
  });

  it("lacks the provider's base URLs and DELTA_PROVIDER, which could send a tool's own delta elsewhere", async () => {
    const seen = await runEnvCase("no-urls", { env: { DELTA_API_KEY: KEY, OPENAI_BASE_URL: "http://127.0.0.1:9/v1", ANTHROPIC_BASE_URL: "http://127.0.0.1:9", DELTA_PROVIDER: "openai" } });
    for (const env of Object.values(seen)) {
      for (const name of ["DELTA_BASE_URL", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "DELTA_PROVIDER"]) expect(env.has(name), name).toBe(false);
    }
  });

  it("lacks DELTA_MODEL, which would choose the model of a tool's own delta", async () => {
    const seen = await runEnvCase("no-model", { env: { DELTA_API_KEY: KEY, DELTA_MODEL: "engine-model" } });
    for (const env of Object.values(seen)) expect(env.has("DELTA_MODEL")).toBe(false);
  });

  it("has the model the run uses when env_passthrough names DELTA_MODEL, from a .env file over the environment", async () => {
    const seen = await runEnvCase("passthrough-model", { extraYaml: "env_passthrough: [DELTA_MODEL]\n", env: { DELTA_API_KEY: KEY, DELTA_MODEL: "env-model" }, dotEnv: "DELTA_MODEL=dotenv-model\n" });
    for (const env of Object.values(seen)) expect(env.get("DELTA_MODEL")).toBe("dotenv-model");
  });

  it("has the base URL the run uses when env_passthrough names DELTA_BASE_URL", async () => {
    const seen = await runEnvCase("passthrough-url", { extraYaml: "env_passthrough: [DELTA_BASE_URL]\n", env: { DELTA_API_KEY: KEY } });
    for (const env of Object.values(seen)) expect(env.get("DELTA_BASE_URL")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
  });
});
