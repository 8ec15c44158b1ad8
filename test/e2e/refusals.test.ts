// End to end: what is refused (126) before anything is created — no workspace, no run directory, LAST_USED untouched — and what a failed model call says about its key.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fault, reply, type MockLlm } from "../support/mock-llm.js";
import { DEFAULT_CONTEXT, delta, modelEnv, writeAgent, type AgentSpec, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm | undefined;

beforeAll(() => {
  writeFileSync(join(root, "replies.jsonl"), '{"content": "ok"}\n');
});

/** Everything under the agent's workspaces/ and what LAST_USED says: a refusal must leave both as they were. */
function snapshot(agent: string): { entries: string[]; lastUsed: string | null } {
  const dir = join(agent, "workspaces");
  if (!existsSync(dir)) return { entries: [], lastUsed: null };
  const entries = readdirSync(dir, { recursive: true }).map(String).sort();
  return { entries, lastUsed: existsSync(join(dir, "LAST_USED")) ? readFileSync(join(dir, "LAST_USED"), "utf8") : null };
}

/** An agent that has run once (W001, LAST_USED), then is broken by `broken`; a run of it is refused cleanly. */
async function expectRefusedCleanly(name: string, broken: AgentSpec, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<{ type: string; message: string }> {
  const agent = writeAgent(root, {}, name);
  const first = await delta(["run", "--agent", agent, "-y", "-m", "x", "--replay", join(root, "replies.jsonl")]);
  expect(first.exitCode, first.stderr).toBe(0);
  writeAgent(root, broken, name);
  const before = snapshot(agent);
  const refused = await delta(["run", "--agent", agent, "-y", "-m", "x", "--format", "json", ...extraArgs], { env: { DELTA_API_KEY: "sk-test", ...env } });
  expect(refused.exitCode, refused.stderr).toBe(126);
  expect(snapshot(agent)).toEqual(before);
  expect(before.lastUsed).toBe("W001\n");
  expect(refused.stderr).not.toMatch(/Internal error|\n\s+at /);
  return JSON.parse(refused.stdout).error as { type: string; message: string };
}

describe("refused before anything is created", () => {
  it("delta init with no name, instead of making an agent called 'undefined'", async () => {
    const cwd = join(root, "init-here");
    mkdirSync(cwd);
    const result = await delta(["init"], { cwd });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("delta init my-agent");
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("--replay of a path that does not exist", async () => {
    const error = await expectRefusedCleanly("agent-replay", {}, ["--replay", join(root, "no-such-replies.jsonl")]);
    expect(error.type).toBe("USAGE_ERROR");
    expect(error.message).toContain(`--replay ${join(root, "no-such-replies.jsonl")}`);
  });

  it("a hook command that does not exist, naming hooks.yaml and the hook", async () => {
    const error = await expectRefusedCleanly("agent-hook-missing", { hooksYaml: "pre_tool_execution:\n  command: [no-such-hook-program]\n" });
    expect(error.type).toBe("CONFIG_ERROR");
    expect(error.message).toContain('hooks.yaml: pre_tool_execution.command[0]: "no-such-hook-program" is not a command found on PATH');
  });

  it("a hook script that is not executable, with the fix", async () => {
    const error = await expectRefusedCleanly("agent-hook-noexec", {
      hooksYaml: "pre_tool_execution:\n  command: ['${AGENT_HOME}/check.sh']\n",
      files: { "check.sh": "#!/bin/sh\nexit 0\n" },
    });
    expect(error.message).toContain("is not executable");
    expect(error.message).toContain("chmod +x");
  });

  it("a context file that is missing and not on_missing: skip, naming the source and the fix", async () => {
    const error = await expectRefusedCleanly("agent-context", { contextYaml: `${DEFAULT_CONTEXT}  - type: file\n    id: notes\n    path: '\${CWD}/notes.md'\n` });
    expect(error.type).toBe("CONFIG_ERROR");
    expect(error.message).toContain("'notes' (sources[3])");
    expect(error.message).toContain("on_missing: skip");
  });

  it("a system_prompt in agent.yaml that context.yaml does not read", async () => {
    const error = await expectRefusedCleanly("agent-prompt", {
      agentYaml: "name: test-agent\nsystem_prompt: prompts/main.md\nllm:\n  model: mock-model\n",
      files: { "prompts/main.md": "You are the real prompt." },
    });
    expect(error.type).toBe("CONFIG_ERROR");
    expect(error.message).toContain("agent.yaml: system_prompt: prompts/main.md is not read by context.yaml");
    expect(error.message).toContain("${AGENT_HOME}/prompts/main.md");
  });

  it("a base URL without its scheme, quoting the user's own text and the fix", async () => {
    const error = await expectRefusedCleanly("agent-base-url", {}, [], { DELTA_BASE_URL: "localhost:11434" });
    expect(error.type).toBe("CONFIG_ERROR");
    expect(error.message).toContain('"localhost:11434" (DELTA_BASE_URL from the environment)');
    expect(error.message).toContain("http://localhost:11434");
  });
});

describe("a model call refused in a new run", () => {
  it("leaves a FAILED run to continue, and says which .env supplied the key; -v lists every .env consulted and which won", async () => {
    server = await serve([fault.status(401), reply.text("fixed")]);
    const agent = writeAgent(root, { files: { ".env": "DELTA_API_KEY=sk-stale-key-from-dotenv\n" } }, "agent-dotenv");
    const ws = join(root, "ws-dotenv");
    const failed = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "k", "-m", "x", "-v", "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(failed.exitCode).toBe(1);
    const error = JSON.parse(failed.stdout).error as { type: string; message: string };
    expect(error.type).toBe("LLM_ERROR");
    expect(error.message).toContain(`API key: DELTA_API_KEY from ${join(agent, ".env")}`);
    expect(error.message).toContain("base URL: DELTA_BASE_URL from the environment");
    expect(failed.stderr).toContain(`[log] .env: ${join(ws, ".env")} (none)`);
    expect(failed.stderr).toContain(`[log] .env: ${join(agent, ".env")} read`);
    expect(failed.stderr).toContain(`[log] .env: using DELTA_API_KEY from ${join(agent, ".env")}`);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-stale-key-from-dotenv");

    writeFileSync(join(agent, ".env"), "");
    const resumed = await delta(["continue", "--run-id", "k", "-w", ws, "--format", "raw"], { env: modelEnv(server.baseUrl) });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe("fixed\n");
  });
});
