// RunResult v2.0 has one schema: what the built `delta` prints for every outcome passes schemas/run-result.schema.json (generated from it), and the file is what the schema generates.
import { Ajv } from "ajv";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { RunResultSchema } from "../../src/run/run-result.js";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, REPO, writeAgent, setUpE2e } from "./harness.js";

const shipped = JSON.parse(readFileSync(join(REPO, "schemas", "run-result.schema.json"), "utf8")) as Record<string, unknown>;
const validate = new Ajv({ allErrors: true, strict: false }).compile(shipped);

const { root, serve } = setUpE2e();
let server: MockLlm | undefined;

/** stdout of `delta run --format json`, checked against the shipped file and the zod schema. */
function checked(stdout: string): Record<string, unknown> {
  const value = JSON.parse(stdout) as Record<string, unknown>;
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
  expect(RunResultSchema.safeParse(value).success).toBe(true);
  return value;
}

describe("schemas/run-result.schema.json", () => {
  it("is what RunResultSchema generates (the build wrote it from the one source)", () => {
    const { $schema: _draft, title: _title, ...generated } = shipped;
    const { $schema: _same, ...fromZod } = z.toJSONSchema(RunResultSchema, { io: "output", target: "draft-7", unrepresentable: "any" }) as Record<string, unknown>;
    expect(generated).toEqual(fromZod);
  });

  it("refuses a RunResult without its metrics, or with a status no run has", () => {
    const good = { schema_version: "2.0", run_id: "r", trace_id: null, status: "FAILED", error: { type: "X", message: "y" }, metrics: { iterations: 0, duration_ms: 0, start_time: "t", end_time: "t", usage: { input_tokens: 0, cached_input_tokens: 0, cache_write_input_tokens: 0, output_tokens: 0, reasoning_tokens: 0, total_cost_usd: null, model_usage: {} } }, metadata: { agent_name: null, workspace_path: null } };
    expect(validate(good)).toBe(true);
    const { metrics: _gone, ...noMetrics } = good;
    expect(validate(noMetrics)).toBe(false);
    expect(validate({ ...good, status: "DONE" })).toBe(false);
  });

  it("accepts what the engine prints when a run completes, waits for a person, fails, and is refused", async () => {
    server = await serve([reply.text("all done"), reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which one?" } }]), reply.toolCalls([{ name: "no_such_tool", arguments: {} }])]);
    const agent = writeAgent(root, {}, "agent-results");
    const ws = join(root, "ws");
    const env = modelEnv(server.baseUrl);
    const completed = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "done", "-m", "go", "--format", "json"], { env });
    expect(checked(completed.stdout)).toMatchObject({ status: "COMPLETED", result: "all done" });
    const waiting = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "asks", "-m", "go", "--format", "json"], { env });
    expect(waiting.exitCode).toBe(101);
    expect(checked(waiting.stdout)).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { prompt: "Which one?" } });
    const failed = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "fails", "-m", "go", "--format", "json", "--max-iterations", "1"], { env });
    expect(failed.exitCode).toBe(1);
    expect(checked(failed.stdout)).toMatchObject({ status: "FAILED", error: { type: "MAX_ITERATIONS" } });
    const refused = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "../escape", "-m", "go", "--format", "json"], { env });
    expect(refused.exitCode).toBe(126);
    expect(checked(refused.stdout)).toMatchObject({ status: "REFUSED", run_id: null });
  });
});
