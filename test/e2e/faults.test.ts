// Model server faults end in a retry, a clear observation, or a clean FAILED (exit 1) that `continue` resumes — never a hang or exit 0 on failure.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fault, reply, startMockLlm, type Step } from "../support/mock-llm.js";
import { actionResults, CRASH_TRACE, delta, type DeltaResult, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-faults-");

interface RunResultJson {
  status: string;
  result?: unknown;
  error?: { type: string; message: string };
}

/** stdout is exactly one RunResult object, and nothing on either stream looks like a crash. */
function parseClean(result: DeltaResult): RunResultJson {
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  return JSON.parse(result.stdout) as RunResultJson;
}

/** An agent whose llm block carries `llm` settings, in its own directory and workspace. */
function setup(name: string, llm = ""): { agent: string; ws: string } {
  const agentYaml = `name: test-agent\nllm:\n  model: mock-model\n${llm}tools:\n  - name: echo\n    exec: "echo \${text}"\n`;
  return { agent: writeAgent(root, { agentYaml }, `agent-${name}`), ws: join(root, `ws-${name}`) };
}

async function run(name: string, steps: Step[], llm = ""): Promise<{ result: DeltaResult; json: RunResultJson; ws: string; requests: number; resume: (message: string, more: Step[]) => Promise<{ result: DeltaResult; json: RunResultJson }> }> {
  const server = await startMockLlm(steps);
  const { agent, ws } = setup(name, llm);
  try {
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl) });
    const requests = server.requests.length;
    await server.close();
    return {
      result,
      json: parseClean(result),
      ws,
      requests,
      resume: async (message, more) => {
        const again = await startMockLlm(more);
        try {
          const resumed = await delta(["continue", "--run-id", name, "-w", ws, "-m", message, "--format", "json"], { env: modelEnv(again.baseUrl) });
          return { result: resumed, json: parseClean(resumed) };
        } finally {
          await again.close();
        }
      },
    };
  } catch (err) {
    await server.close();
    throw err;
  }
}

describe.concurrent("model server faults", () => {
  it("waits as long as a 429's Retry-After asks, then completes", async () => {
    const { result, json, requests } = await run("rate-limited", [fault.status(429, { retryAfter: "1" }), reply.text("after the wait")]);
    expect(result.stderr).toMatch(/model request failed \(.*429.*\); retry 1 in 1000 ms/);
    expect(result.exitCode).toBe(0);
    expect(json).toMatchObject({ status: "COMPLETED", result: "after the wait" });
    expect(requests).toBe(2);
  });

  it("retries a connection reset mid-body and completes", async () => {
    const { result, json, requests } = await run("reset", [fault.reset(), reply.text("second try")]);
    expect(result.stderr).toMatch(/model request failed .*; retry 1 in/);
    expect(result.exitCode).toBe(0);
    expect(json).toMatchObject({ status: "COMPLETED", result: "second try" });
    expect(requests).toBe(2);
  });

  const fourTimes = (step: () => Step): Step[] => Array.from({ length: 4 }, step);
  const failures = [
    { name: "server-error", what: "retries a 500 three times, then", steps: fourTimes(() => fault.status(500)), llm: "", message: /500/, requests: 4 },
    { name: "hang", what: "gives up on a hanging model after llm.timeout_ms,", steps: [fault.hang()], llm: "  timeout_ms: 300\n  max_retries: 0\n", message: /no answer within 300 ms/, requests: 1 },
    // Each unusable reply was a billed generation: asked for again once, never three times.
    { name: "invalid-json", what: "asks once more after a reply that is not JSON, then", steps: fourTimes(fault.invalidJson), llm: "", message: /failed after 2 attempts: .*JSON/i, requests: 2 },
    { name: "no-choices", what: "asks once more after a reply with no choices, then", steps: fourTimes(fault.noChoices), llm: "", message: /failed after 2 attempts: .*choice/i, requests: 2 },
  ];
  for (const { name, what, steps, llm, message, requests } of failures) it(`${what} FAILs with LLM_ERROR (exit 1), and continue completes the run`, async () => {
    const first = await run(name, steps, llm);
    expect(first.requests).toBe(requests);
    expect(first.result.exitCode).toBe(1);
    expect(first.json).toMatchObject({ status: "FAILED", error: { type: "LLM_ERROR" } });
    expect(first.json.error?.message).toMatch(message);

    const resumed = await first.resume("try again", [reply.text("recovered")]);
    expect(resumed.result.exitCode).toBe(0);
    expect(resumed.json).toMatchObject({ status: "COMPLETED", result: "recovered" });
  });

  it("turns tool-call arguments that are not JSON into an ERROR observation the model sees, and goes on", async () => {
    const { result, json, ws } = await run("bad-args", [reply.toolCalls([{ name: "echo", arguments: '{"text": "unterminated' }]), reply.text("noted")]);
    expect(result.exitCode).toBe(0);
    expect(json).toMatchObject({ status: "COMPLETED", result: "noted" });
    const [observed] = actionResults(ws, "bad-args");
    expect(observed).toMatchObject({ status: "ERROR", tool_name: "echo" });
    expect(observed?.observation_content).toMatch(/JSON/);
  });
});
