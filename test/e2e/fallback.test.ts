// llm.fallback through the real `delta`: a primary still overloaded after its retries (recorded 529) or retired (recorded 404) hands the call to the next model and the run completes; no signed thinking reaches another provider; continue after a fallback is not a changed endpoint; each call is priced at the model that answered.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { reply, type RecordedRequest } from "../support/mock-llm.js";
import { recordedStep } from "../support/recorded.js";
import { collectFiles, CRASH_TRACE, delta, readEvents, runDir, setUpE2e, writeAgent } from "./harness.js";

const e2e = setUpE2e("delta-fallback-");
const KEY = "sk-ant-fallback-e2e-0123456789";
const OTHER_KEY = "sk-openai-fallback-e2e-0123456789";

const modelOf = (request: RecordedRequest): string => (request.body as { model: string }).model;
const thoughts = (ws: string, runId: string) => readEvents(ws, runId).filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");
const failures = (ws: string, runId: string) => readEvents(ws, runId).filter((event): event is EventOf<"LLM_ATTEMPT_FAILED"> => event.type === "LLM_ATTEMPT_FAILED");

interface RunJson {
  status: string;
  metrics: { usage: { total_cost_usd: number | null; model_usage: Record<string, { input_tokens: number; output_tokens: number; total_cost_usd: number | null }> } };
}

async function drive(args: string[], env: Record<string, string>) {
  const result = await delta([...args, "--format", "json"], { env: { DELTA_RETRY_BASE_MS: "1", ...env } });
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  return { ...result, json: result.exitCode === 126 ? null : (JSON.parse(result.stdout) as RunJson) };
}

describe("llm.fallback", () => {
  it("a recorded 529 that outlasts the retries: the fallback answers, the run completes, continue is not refused, each model priced at its own price", async () => {
    // The primary is overloaded on every attempt; the fallback, a model name on the same endpoint, answers.
    const server = await e2e.serve((request) => (modelOf(request) === "claude-busy" ? recordedStep("anthropic/error-overloaded-529") : reply.text("done", { usage: { prompt_tokens: 1000, completion_tokens: 100 } })), { protocol: "anthropic" });
    const agent = writeAgent(e2e.root, {
      agentYaml:
        "name: overloaded\nllm:\n  provider: anthropic\n  model: claude-busy\n  max_retries: 1\n  fallback: [claude-calm]\n" +
        "  pricing:\n    claude-busy: { input_per_million: 3, output_per_million: 15 }\n    claude-calm: { input_per_million: 1, output_per_million: 5 }\ntools: []\n",
    }, "agent-overloaded");
    const ws = join(e2e.root, "ws-overloaded");
    const env = { DELTA_API_KEY: KEY, DELTA_BASE_URL: server.baseUrl };
    const first = await drive(["run", "--agent", agent, "-w", ws, "--run-id", "busy", "-m", "go"], env);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json!.status).toBe("COMPLETED");
    expect(server.requests.map(modelOf)).toEqual(["claude-busy", "claude-busy", "claude-calm"]);
    expect(failures(ws, "busy").map((event) => [event.model, event.http_status, event.server_code])).toEqual([["claude-busy", 529, "overloaded_error"], ["claude-busy", 529, "overloaded_error"]]);
    expect(thoughts(ws, "busy")[0]!.answered_by).toEqual({ provider: "anthropic", base_url: server.baseUrl, model: "claude-calm" });
    expect(first.stderr).toContain("is still overloaded after its retries; asking the fallback claude-calm");
    // Priced at the fallback's price: 1000 × $1/M + 100 × $5/M.
    expect(first.json!.metrics.usage.model_usage["claude-calm"]!.total_cost_usd).toBeCloseTo(0.0015, 9);

    const again = await drive(["continue", "--run-id", "busy", "-w", ws, "-m", "once more"], env);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.json!.status).toBe("COMPLETED");
    expect(thoughts(ws, "busy").map((thought) => thought.answered_by?.model)).toEqual(["claude-calm", "claude-calm"]);
    expect(again.json!.metrics.usage.total_cost_usd).toBeCloseTo(0.003, 9);
    const starts = readEvents(ws, "busy").filter((event): event is EventOf<"ENGINE_START"> => event.type === "ENGINE_START");
    expect(starts.map((start) => start.config.fallback)).toEqual([[{ provider: "anthropic", base_url: server.baseUrl, model: "claude-calm" }], [{ provider: "anthropic", base_url: server.baseUrl, model: "claude-calm" }]]);

    const shown = await delta(["show", "busy", "-w", ws]);
    expect(shown.stdout).toContain(`claude-calm (fallback: anthropic ${server.baseUrl})`);
  });

  it("a recorded 404 for a retired model: another provider answers, sent no signed thinking, with its own key", async () => {
    // The primary thinks (a recorded reply with a signed thinking block and a tool call), then is retired.
    let primaryCalls = 0;
    const primary = await e2e.serve(() => (primaryCalls++ === 0 ? recordedStep("anthropic/thinking-signature-tool-use") : recordedStep("anthropic/error-not-found-404")), { protocol: "anthropic" });
    const other = await e2e.serve(() => reply.text("It is sunny in Florence."), { protocol: "chat-completions" });
    const agent = writeAgent(e2e.root, {
      agentYaml:
        "name: retired\nllm:\n  provider: anthropic\n  model: claude-old\n  max_retries: 2\n  thinking: { budget_tokens: 1024 }\n" +
        `  fallback:\n    - { provider: openai, model: gpt-new, key_env: FALLBACK_KEY, base_url: '${other.baseUrl}' }\n` +
        'tools:\n  - name: weather\n    exec: "echo 18C in ${location}"\n',
    }, "agent-retired");
    const ws = join(e2e.root, "ws-retired");
    const result = await drive(["run", "--agent", agent, "-w", ws, "--run-id", "old", "-m", "weather?"], { DELTA_API_KEY: KEY, DELTA_BASE_URL: primary.baseUrl, FALLBACK_KEY: OTHER_KEY });
    expect(result.exitCode, result.stderr).toBe(0);
    // A retired model is not retried: one 404, then the fallback.
    expect(primary.requests).toHaveLength(2);
    expect(failures(ws, "old").map((event) => [event.model, event.http_status, event.retry_in_ms])).toEqual([["claude-old", 404, null]]);
    expect(other.requests).toHaveLength(1);
    const sent = other.requests[0]!;
    expect(sent.headers.authorization).toBe(`Bearer ${OTHER_KEY}`);
    const body = JSON.stringify(sent.body);
    expect(modelOf(sent)).toBe("gpt-new");
    expect(body).not.toContain("signature");
    expect(body).not.toContain("thinking");
    expect(body).toContain("18C in Florence, Italy");
    const [asked, answered] = thoughts(ws, "old");
    expect(asked!.provider_data).toMatchObject({ protocol: "anthropic" });
    expect(answered).toMatchObject({ answered_by: { provider: "openai", base_url: other.baseUrl, model: "gpt-new" }, reasoning_dropped: 1, content: "It is sunny in Florence." });
    for (const file of collectFiles(runDir(ws, "old"))) expect(readFileSync(file, "utf8"), file).not.toContain(OTHER_KEY);
    // The HTML report names the provider that answered and the reasoning left out.
    const report = await delta(["report", "old", "-w", ws]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(report.stdout).toContain(`openai ${other.baseUrl}`);
    expect(report.stdout).toContain("not sent: 1 earlier reply by another endpoint");
  });
});
