// Batch mode end to end, against batch APIs that follow OpenAI's and Anthropic's documented shapes: five runs queued become one batch of five; before it ends `continue --due` leaves them DEFERRED, after it they complete, priced at the batch rate; a `batch submit` killed right after the provider accepted a batch is found again (OpenAI) or refused as in doubt (Anthropic); an endpoint with no batch API is refused.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { startMockBatchApi, type MockBatchApi } from "../support/mock-batch-api.js";
import { pauseGate } from "../support/pause-points.js";
import { RECORDED_DIR } from "../support/recorded.js";
import { delta, modelEnv, readEvents, readMetadataFile, setUpE2e, spawnDelta, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-batch-");
const servers: MockBatchApi[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** The first reply body of a recorded results download: OpenAI's output line's response.body, Anthropic's result.message. */
function recordedReply(file: string): unknown {
  const first = JSON.parse(readFileSync(join(RECORDED_DIR, file), "utf8").split("\n")[0]!) as { response?: { body: unknown }; result?: { message: unknown } };
  return first.response?.body ?? first.result?.message;
}
const OPENAI_REPLY = recordedReply("openai-batch/output-file-responses.response.jsonl");
const ANTHROPIC_REPLY = recordedReply("anthropic-batch/results-succeeded.response.jsonl");

const PRICING = "  pricing:\n    input_per_million: 1\n    output_per_million: 8\n";
const openaiAgent = (): string => writeAgent(root, { agentYaml: `name: batcher\nllm:\n  provider: openai-responses\n  model: gpt-5-nano\n  batch: openai\n${PRICING}tools:\n  - name: echo\n    exec: "echo \${text}"\n` }, "openai-agent");
const anthropicAgent = (): string => writeAgent(root, { agentYaml: `name: batcher\nllm:\n  provider: anthropic\n  model: claude-haiku-4-5\n  max_tokens: 256\n  batch: anthropic\n${PRICING}` }, "anthropic-agent");

async function server(api: "openai" | "anthropic"): Promise<MockBatchApi> {
  const started = await startMockBatchApi(api);
  servers.push(started);
  return started;
}

const of = <T extends JournalEvent["type"]>(events: JournalEvent[], type: T): EventOf<T>[] => events.filter((event): event is EventOf<T> => event.type === type);

async function queueRuns(agent: string, api: MockBatchApi, ws: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "--format", "json", `What is 2+2? (${id})`], { env: modelEnv(api.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(75);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "DEFERRED", deferred: { reason: "MODEL_BATCHED", resume_after: null } });
  }
}

/** `delta batch submit`, stopped at the line after the provider accepted its batch (before the batch id is journaled), then killed with -9. */
async function submitKilledOnceAccepted(api: MockBatchApi, ws: string): Promise<void> {
  const gate = pauseGate("batch-accepted", root);
  const child = spawnDelta(["batch", "submit", "-w", ws], { env: { ...modelEnv(api.baseUrl), ...gate.env } });
  const [pid] = await gate.reached();
  process.kill(pid!, "SIGKILL");
  await child;
}

describe("OpenAI Batch", () => {
  it("five runs queued → one batch of five; continue --due before it ends leaves them DEFERRED; after, they complete, priced at half", async () => {
    const api = await server("openai");
    const agent = openaiAgent();
    const ws = join(root, "ws-openai");
    const ids = ["doc-1", "doc-2", "doc-3", "doc-4", "doc-5"];
    await queueRuns(agent, api, ws, ids);
    expect(api.log).toEqual([]);
    const queued = of(readEvents(ws, "doc-1"), "MODEL_QUEUED");
    expect(queued).toHaveLength(1);
    expect(queued[0]!.custom_id).toMatch(/^doc-1-i1-[0-9a-f]{8}$/);
    expect(readFileSync(join(ws, ".delta", "doc-1", queued[0]!.request_record), "utf8")).toContain("What is 2+2? (doc-1)");

    const submit = await delta(["batch", "submit", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(submit.exitCode, submit.stderr).toBe(0);
    expect(api.batches).toHaveLength(1);
    const [batch] = api.batches;
    expect(batch!.lines).toHaveLength(5);
    expect(batch!.endpoint).toBe("/v1/responses");
    expect(batch!.lines.map((line) => line.body.model)).toEqual(Array(5).fill("gpt-5-nano"));
    expect(JSON.parse(submit.stdout)).toMatchObject({ batches: [{ batch_id: batch!.id, calls: 5, found_again: false }], not_sent: [] });
    for (const id of ids) {
      const submitted = of(readEvents(ws, id), "MODEL_SUBMITTED");
      expect(submitted.map((event) => event.batch_id)).toEqual([null, batch!.id]);
      expect(batch!.metadata).toEqual({ delta_submission_id: submitted[0]!.submission_id });
    }
    // The journal grew under the run's lease after its end: metadata.json's record of that end follows, and verify holds.
    const verified = await delta(["verify", "doc-1", "-w", ws]);
    expect(verified.exitCode, verified.stdout + verified.stderr).toBe(0);
    // A second submit has nothing left to send.
    const again = await delta(["batch", "submit", "-w", ws], { env: modelEnv(api.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(api.batches).toHaveLength(1);

    const early = await delta(["continue", "--due", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(early.exitCode, early.stderr).toBe(75);
    for (const id of ids) expect(readMetadataFile(ws, id)).toMatchObject({ status: "DEFERRED" });
    expect(of(readEvents(ws, "doc-3"), "THOUGHT")).toEqual([]);
    const status = await delta(["batch", "status", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(JSON.parse(status.stdout)).toMatchObject({ queued: 0, in_doubt: 0, submitted: 5, batches: [{ batch_id: batch!.id, status: "in_progress", runs: 5 }] });

    api.end(batch!.id, () => ({ body: OPENAI_REPLY }));
    const done = await delta(["continue", "--due", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(done.exitCode, done.stderr).toBe(0);
    const results = done.stdout.trim().split("\n").map((line) => JSON.parse(line) as { run_id: string; status: string; result: unknown; metrics: { usage: Record<string, unknown> } });
    expect(results.map((result) => result.run_id).sort()).toEqual(ids);
    for (const result of results) {
      expect(result).toMatchObject({ status: "COMPLETED", result: "4" });
      // 18 input tokens at $1/M and 109 output at $8/M, half off: $0.000445.
      expect(result.metrics.usage.total_cost_usd).toBeCloseTo(0.000445, 9);
      expect(result.metrics.usage.batch_usage).toMatchObject({ input_tokens: 18, output_tokens: 109, reasoning_tokens: 64 });
      expect((result.metrics.usage.batch_usage as { total_cost_usd: number }).total_cost_usd).toBeCloseTo(0.000445, 9);
    }
    const [thought] = of(readEvents(ws, "doc-2"), "THOUGHT");
    expect(thought).toMatchObject({ iteration: 1, usage: { input_tokens: 18, output_tokens: 109, reasoning_tokens: 64 }, batch: { batch_id: batch!.id } });
    // The reply's encrypted reasoning is kept, to be sent back as a live reply's would.
    expect(JSON.stringify(thought!.provider_data)).toContain("gAAAAABqhcENslaOC5iNpgFzMyWE2vsjf9KesZgk9v5BXel5");
    // show and the report give the batch usage apart, at the batch rate.
    const shown = await delta(["show", "doc-2", "-w", ws]);
    expect(shown.stdout).toMatch(/\nbatch\s+18 in · 0 cached · 0 cache write · 109 out · 64 reasoning · \$0\.00044 cost \(answered through the provider's batch API/);
    expect(shown.stdout).toContain("model call queued for the OpenAI Batch API");
    const report = await delta(["report", "doc-2", "-w", ws, "-o", join(root, "doc-2.html")]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(readFileSync(join(root, "doc-2.html"), "utf8")).toContain("of which through batches");
    // Traces: the call is a chat span whose time is the batch's wait; the queueing is an event of the invocation that queued it.
    const spans = await delta(["export", "doc-2", "-w", ws, "--format", "otlp-json"]);
    expect(spans.exitCode, spans.stderr).toBe(0);
    const chat = (JSON.parse(spans.stdout) as { resourceSpans: { scopeSpans: { spans: { name: string; startTimeUnixNano: string; endTimeUnixNano: string; events?: { name: string }[] }[] }[] }[] }).resourceSpans
      .flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans));
    const call = chat.find((span) => span.name.startsWith("chat"))!;
    expect(Number(BigInt(call.endTimeUnixNano) - BigInt(call.startTimeUnixNano)) / 1e6).toBeGreaterThanOrEqual(thought!.duration_ms! - 1);
    expect(chat.flatMap((span) => (span.events ?? []).map((event) => event.name))).toContain("delta.batch.queued");
    // A recorded batched run replays as any run: its collected reply answers the call at once.
    const replayed = await delta(["run", "--agent", agent, "-w", join(root, "ws-replayed"), "--replay", join(ws, ".delta", "doc-2"), "--format", "json", "What is 2+2? (doc-2)"]);
    expect(replayed.exitCode, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "COMPLETED", result: "4" });
    // The batch's results were downloaded once, by continue --due, and handed to the five runs' continues.
    expect(api.log.filter((line) => line.startsWith("GET /v1/files/"))).toHaveLength(1);
    expect(api.log.filter((line) => line.startsWith("POST"))).toHaveLength(2);
  });

  it("batch submit killed right after the provider accepted the batch: submitting again finds that batch by its metadata, and sends nothing twice", async () => {
    const api = await server("openai");
    const agent = openaiAgent();
    const ws = join(root, "ws-openai-crash");
    await queueRuns(agent, api, ws, ["a", "b"]);
    await submitKilledOnceAccepted(api, ws);
    expect(api.batches).toHaveLength(1);
    expect(of(readEvents(ws, "a"), "MODEL_SUBMITTED").map((event) => event.batch_id)).toEqual([null]);
    // Its runs stay DEFERRED, saying the submission's answer was lost.
    const lost = await delta(["continue", "--run-id", "a", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(lost.exitCode, lost.stderr).toBe(75);
    expect(JSON.parse(lost.stdout).deferred.message).toContain("when its answer was lost");

    const again = await delta(["batch", "submit", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(api.batches).toHaveLength(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ batches: [{ batch_id: api.batches[0]!.id, calls: 2, found_again: true }] });
    for (const id of ["a", "b"]) expect(of(readEvents(ws, id), "MODEL_SUBMITTED").map((event) => event.batch_id)).toEqual([null, api.batches[0]!.id]);
  });

  it("a request the batch failed, or one it expired, is that run's model error; continue queues it again", async () => {
    const api = await server("openai");
    const agent = openaiAgent();
    const ws = join(root, "ws-openai-failed");
    await queueRuns(agent, api, ws, ["bad", "late"]);
    expect((await delta(["batch", "submit", "-w", ws], { env: modelEnv(api.baseUrl) })).exitCode).toBe(0);
    api.end(api.batches[0]!.id, (line) => (line.custom_id.startsWith("bad") ? { status: 400, body: { error: { message: "Invalid value for 'input'.", type: "invalid_request_error", code: "invalid_value" } } } : { type: "expired" }));
    const done = await delta(["continue", "--due", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(done.exitCode, done.stderr).toBe(1);
    const results = done.stdout.trim().split("\n").map((line) => JSON.parse(line) as { run_id: string; status: string; error: { type: string; message: string } });
    expect(results.find((result) => result.run_id === "bad")).toMatchObject({ status: "FAILED", error: { type: "LLM_ERROR" } });
    expect(results.find((result) => result.run_id === "bad")!.error.message).toContain("Invalid value for 'input'.");
    expect(results.find((result) => result.run_id === "late")!.error.message).toContain("batch_expired");
    const requeued = await delta(["continue", "--run-id", "late", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(requeued.exitCode, requeued.stderr).toBe(75);
    expect(of(readEvents(ws, "late"), "MODEL_QUEUED")).toHaveLength(2);
  });

  it("batch cancel cancels the runs' batch; collected, the cancelled calls are the runs' model errors", async () => {
    const api = await server("openai");
    const agent = openaiAgent();
    const ws = join(root, "ws-openai-cancel");
    await queueRuns(agent, api, ws, ["c1", "c2"]);
    expect((await delta(["batch", "submit", "-w", ws], { env: modelEnv(api.baseUrl) })).exitCode).toBe(0);
    const cancel = await delta(["batch", "cancel", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(JSON.parse(cancel.stdout)).toMatchObject({ batches: [{ batch_id: api.batches[0]!.id, status: "cancelling", runs: 2 }] });
    expect(api.log).toContain(`POST /v1/batches/${api.batches[0]!.id}/cancel`);
    api.end(api.batches[0]!.id, () => ({ error: { code: "batch_cancelled", message: "The batch was cancelled before this request ran." } }));
    const done = await delta(["continue", "--due", "-w", ws], { env: modelEnv(api.baseUrl) });
    expect(done.exitCode, done.stderr).toBe(1);
    expect(done.stderr).toContain("batch_cancelled: The batch was cancelled before this request ran.");
  });

  it("run --batch --submit sends its own call at once", async () => {
    const api = await server("openai");
    const agent = openaiAgent();
    const ws = join(root, "ws-openai-own");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "own", "--batch", "--submit", "--format", "json", "What is 2+2?"], { env: modelEnv(api.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(75);
    expect(api.batches).toHaveLength(1);
    expect(of(readEvents(ws, "own"), "MODEL_SUBMITTED").map((event) => event.batch_id)).toEqual([null, api.batches[0]!.id]);
  });
});

describe("Anthropic Message Batches", () => {
  it("submit killed after the provider accepted the batch: a second submit refuses the submission in doubt; --resubmit sends it; the ended batch is collected", async () => {
    const api = await server("anthropic");
    const agent = anthropicAgent();
    const ws = join(root, "ws-anthropic");
    await queueRuns(agent, api, ws, ["x", "y"]);
    await submitKilledOnceAccepted(api, ws);
    expect(api.batches).toHaveLength(1);

    const refused = await delta(["batch", "submit", "-w", ws], { env: modelEnv(api.baseUrl) });
    expect(refused.exitCode, refused.stderr).toBe(1);
    expect(refused.stderr).toContain("is in doubt");
    expect(refused.stderr).toContain("--resubmit");
    expect(api.batches).toHaveLength(1);

    const resent = await delta(["batch", "submit", "-w", ws, "--resubmit"], { env: modelEnv(api.baseUrl) });
    expect(resent.exitCode, resent.stderr).toBe(0);
    expect(api.batches).toHaveLength(2);
    const batch = api.batches[1]!;
    expect(batch.lines.map((line) => line.body.max_tokens)).toEqual([256, 256]);
    expect(batch.lines.every((line) => /^[A-Za-z0-9_-]{1,64}$/.test(line.custom_id))).toBe(true);

    api.end(batch.id, () => ({ body: ANTHROPIC_REPLY }));
    const done = await delta(["continue", "--due", "-w", ws, "--format", "json"], { env: modelEnv(api.baseUrl) });
    expect(done.exitCode, done.stderr).toBe(0);
    for (const line of done.stdout.trim().split("\n")) {
      const result = JSON.parse(line) as { status: string; result: unknown; metrics: { usage: { total_cost_usd: number } } };
      expect(result).toMatchObject({ status: "COMPLETED", result: "4" });
      // 20 input tokens at $1/M, 5 output at $8/M, half off.
      expect(result.metrics.usage.total_cost_usd).toBeCloseTo((20 * 1 + 5 * 8) / 1e6 / 2, 9);
    }
    // The results came from the batch's own path on the endpoint, never from the results_url the reply named.
    expect(api.log).toContain(`GET /v1/messages/batches/${batch.id}/results`);
  });
});

describe("custom ids", () => {
  it("a run id of 128 characters with dots queues a call whose custom id is at most 64 of [A-Za-z0-9_-]", async () => {
    const agent = openaiAgent();
    const ws = join(root, "ws-long-id");
    const runId = `a.b-${"x".repeat(124)}`;
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "--format", "json", "hi"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(result.exitCode, result.stderr).toBe(75);
    const [queued] = of(readEvents(ws, runId), "MODEL_QUEUED");
    expect(queued!.custom_id).toMatch(/^a_b-x+-i1-[0-9a-f]{8}$/);
    expect(queued!.custom_id.length).toBeLessThanOrEqual(64);
  });
});

describe("a fleet's budget ledger", () => {
  it("cannot count batched calls yet: a batched run given one is refused (126), saying what does hold them", async () => {
    const agent = openaiAgent();
    const ledger = join(root, "fleet.budget");
    expect((await delta(["budget", "init", ledger, "--limit-usd", "10"])).exitCode).toBe(0);
    const result = await delta(["run", "--agent", agent, "-w", join(root, "ws-ledger"), "--budget-file", ledger, "--format", "json", "hi"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(result.exitCode, result.stderr).toBe(126);
    expect(JSON.parse(result.stdout).error.message).toContain("the run's own limits (--max-cost-usd, llm.budget) do hold its batched calls");
  });
});

describe("an endpoint with no batch API", () => {
  it("is refused (126) at start, saying how to name a gateway's batch API", async () => {
    const agent = writeAgent(root, { agentYaml: "name: plain\nllm:\n  model: llama3\n" }, "plain-agent");
    const ws = join(root, "ws-plain");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--batch", "--format", "json", "hi"], { env: modelEnv("http://127.0.0.1:11434/v1") });
    expect(result.exitCode, result.stderr).toBe(126);
    expect(JSON.parse(result.stdout).error.message).toContain("llm.batch: openai");
  });
});
