// One price per run: each model call priced with the llm.pricing of the process that made it, the same in the RunResult, `show` and the report.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const MILLION = { usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } };
const agentYaml = (pricing: string) => `name: priced\nllm:\n  model: mock-model\n${pricing}tools: []\n`;
const pricedAt = (dollars: number) => `  pricing: { input_per_million: ${dollars}, output_per_million: 0 }\n`;

const { root, serve } = setUpE2e("delta-run-pricing-");
let server: MockLlm;
beforeAll(async () => {
  server = await serve([reply.text("one", MILLION), reply.text("two", MILLION), reply.text("three", MILLION), reply.text("four", MILLION)]);
});

/** `run` with the first pricing, `continue` after agent.yaml changed to the second; the cost each view gives. */
async function runThenContinue(name: string, first: string, second: string) {
  const agent = writeAgent(root, { agentYaml: agentYaml(first) }, `agent-${name}`);
  const ws = join(root, `ws-${name}`);
  const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "one", "--format", "json"], { env: modelEnv(server.baseUrl) });
  expect(run.exitCode, run.stderr).toBe(0);
  writeFileSync(join(agent, "agent.yaml"), agentYaml(second));
  const resumed = await delta(["continue", "--run-id", name, "-w", ws, "-m", "two", "--format", "json"], { env: modelEnv(server.baseUrl) });
  expect(resumed.exitCode, resumed.stderr).toBe(0);
  const shown = await delta(["show", name, "-w", ws]);
  const report = await delta(["report", name, "-w", ws]);
  expect(shown.exitCode, shown.stderr).toBe(0);
  expect(report.exitCode, report.stderr).toBe(0);
  return {
    result: (JSON.parse(resumed.stdout) as { metrics: { usage: { total_cost_usd: number | null } } }).metrics.usage.total_cost_usd,
    show: /^total .*$/m.exec(shown.stdout)![0],
    report: /<span>cost <b>([^<]*)<\/b><\/span>/.exec(report.stdout)![1],
  };
}

describe.concurrent("a run priced by two processes", () => {
  it("prices each call with its own process's llm.pricing: $1 then $3 is $4 in the RunResult, show and the report", async () => {
    const cost = await runThenContinue("changed", pricedAt(1), pricedAt(3));
    expect(cost.result).toBe(4);
    expect(cost.show).toContain("2,000,000 in · 0 out · $4.0000 cost");
    expect(cost.report).toBe("$4.0000");
  });

  it("has no total cost once a call has no price: a run without llm.pricing continued with one", async () => {
    const cost = await runThenContinue("unpriced-first", "", pricedAt(3));
    expect(cost.result).toBeNull();
    expect(cost.show).toMatch(/2,000,000 in · 0 out · cost not recorded$/);
    expect(cost.report).toBe("not recorded");
  });
});
