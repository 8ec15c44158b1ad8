// A batched run's loop, offline: a call is queued (pre_llm_request at queue time, nothing sent) and the run deferred; a submitted call is collected from its ended batch as a THOUGHT like a live reply's, post_llm_response then, and the next call queues; a batch still running, an unsent call, a failed result and --live each do what they say.
import { describe, expect, it } from "vitest";
import type { LlmReply, LlmRequest } from "../../src/conversation.js";
import { DeferredError, LlmError } from "../../src/errors.js";
import type { BatchAnswer, LoopBatch } from "../../src/loop/ports.js";
import { calls, scriptedRun, text, type ScriptedRun } from "./scripted-loop.js";

/** A batch port in memory: queued requests kept by custom id, and each collect answered by `answers` in turn. */
function memoryBatch(answers: (BatchAnswer | null)[], options: { live?: boolean; queues?: boolean } = {}): LoopBatch & { queued: Map<string, LlmRequest>; collected: string[] } {
  const queued = new Map<string, LlmRequest>();
  const collected: string[] = [];
  return {
    queued,
    collected,
    queues: options.queues ?? true,
    live: options.live ?? false,
    queue(iteration, request) {
      const customId = `run-1-i${iteration}-${queued.size}`;
      queued.set(customId, request);
      return { custom_id: customId, request_record: `io/batch/${customId}.json`, batch_api: "openai", provider: "openai-responses", base_url: "https://api.openai.com/v1", model: request.model };
    },
    request: (event) => queued.get(event.custom_id)!,
    submitOwn: null,
    async collect(call) {
      collected.push(call.queued.custom_id);
      return answers.shift() ?? null;
    },
  };
}

/** What `delta batch submit` journals for the run's waiting call once the provider accepted its batch. */
function submit(run: ScriptedRun, batchId: string | null = "batch_1"): void {
  const queued = run.of("MODEL_QUEUED").at(-1)!;
  run.ports.journal.append({ type: "MODEL_SUBMITTED", iteration: queued.iteration, custom_id: queued.custom_id, submission_id: "s1", batch_id: null, requests: 5 });
  if (batchId !== null) run.ports.journal.append({ type: "MODEL_SUBMITTED", iteration: queued.iteration, custom_id: queued.custom_id, submission_id: "s1", batch_id: batchId, requests: 5 });
}

const REASONED: LlmReply = {
  ...calls(["echo", '{"text":"one"}']),
  usage: { input_tokens: 36, output_tokens: 224, reasoning_tokens: 128 },
  reasoning: "thinking it over",
  provider_data: { protocol: "openai-responses", items: [{ type: "reasoning", encrypted_content: "gAAAA" }] },
};

describe("a batched run's model call", () => {
  it("is queued, not sent: MODEL_QUEUED names the call, pre_llm_request ran on it, and the run ends DEFERRED MODEL_BATCHED", async () => {
    const batch = memoryBatch([]);
    const run = scriptedRun({ turns: [], batch });
    const end = await run.run();
    expect(end.status).toBe("DEFERRED");
    expect(end.status === "DEFERRED" && end.deferred.reason).toBe("MODEL_BATCHED");
    expect(run.requests).toEqual([]);
    const [queued] = run.of("MODEL_QUEUED");
    expect(queued).toMatchObject({ iteration: 1, custom_id: "run-1-i1-0", batch_api: "openai" });
    expect(batch.queued.get(queued!.custom_id)!.messages.at(-1)).toMatchObject({ role: "user", content: "the task" });
    expect(run.hooked.map((hook) => hook.name)).toContain("pre_llm_request");
    expect(run.hooked.map((hook) => hook.name)).not.toContain("post_llm_response");
    expect(run.of("THOUGHT")).toEqual([]);
  });

  it("is held to the run's own limits: a call that could pass them is not queued (DEFERRED BUDGET_EXHAUSTED), and an admitted one leaves nothing reserved", async () => {
    const full = scriptedRun({ turns: [], batch: memoryBatch([]), budget: { admit: async () => { throw new DeferredError({ reason: "BUDGET_EXHAUSTED", resumeAfter: null, message: "the run's budget of $1 has $0.01 left" }); } } });
    const end = await full.run();
    expect(end.status === "DEFERRED" && end.deferred.reason).toBe("BUDGET_EXHAUSTED");
    expect(full.of("MODEL_QUEUED")).toEqual([]);
    const settled: unknown[] = [];
    const room = scriptedRun({ turns: [], batch: memoryBatch([]), budget: { admit: async () => ({ settle: (outcome) => (settled.push(outcome), null) }) } });
    await room.run();
    expect(room.of("MODEL_QUEUED")).toHaveLength(1);
    expect(settled).toMatchObject([{ failure: { unbilled: true } }]);
  });

  it("queues the request pre_llm_request replaced, not the one built", async () => {
    const batch = memoryBatch([]);
    const run = scriptedRun({ turns: [], batch, hooks: { pre_llm_request: () => ({ kind: "continue", output: { payload: { model: "replaced-model", messages: [{ role: "user", content: "replaced" }] } } }) } });
    await run.run();
    const [queued] = run.of("MODEL_QUEUED");
    expect(queued!.model).toBe("replaced-model");
    expect(batch.queued.get(queued!.custom_id)!.messages).toEqual([{ role: "user", content: "replaced" }]);
  });

  it("still queued (not submitted) when continued: the run stays DEFERRED and no batch is asked", async () => {
    const batch = memoryBatch([]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    const end = await run.continueRun();
    expect(end.status === "DEFERRED" && end.deferred.message).toContain("delta batch submit");
    expect(batch.collected).toEqual([]);
    expect(run.of("MODEL_QUEUED")).toHaveLength(1);
  });

  it("submitted to a batch still running: the run stays DEFERRED, nothing journaled but the ends", async () => {
    const batch = memoryBatch([null]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run);
    const end = await run.continueRun();
    expect(end.status === "DEFERRED" && end.deferred.reason).toBe("MODEL_BATCHED");
    expect(batch.collected).toEqual(["run-1-i1-0"]);
    expect(run.of("THOUGHT")).toEqual([]);
    expect(run.of("MODEL_QUEUED")).toHaveLength(1);
  });

  it("collected from its ended batch: a THOUGHT as a live reply's (usage, reasoning, provider data) naming the batch, post_llm_response, its tools run, the next call queued", async () => {
    const batch = memoryBatch([{ kind: "reply", reply: REASONED, batchId: "batch_1" }]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run);
    const end = await run.continueRun();
    expect(end.status === "DEFERRED" && end.deferred.reason).toBe("MODEL_BATCHED");
    const [thought] = run.of("THOUGHT");
    expect(thought).toMatchObject({ iteration: 1, usage: REASONED.usage, reasoning: "thinking it over", provider_data: REASONED.provider_data, batch: { batch_id: "batch_1", custom_id: "run-1-i1-0" } });
    expect(run.ran).toEqual([["echo", "one"]]);
    expect(run.hooked.filter((hook) => hook.name === "post_llm_response")).toHaveLength(1);
    expect(run.requests).toEqual([]);
    expect(run.of("MODEL_QUEUED").map((queued) => queued.iteration)).toEqual([1, 2]);
    // The second call's request holds the first reply and its tool result.
    const second = batch.queued.get(run.of("MODEL_QUEUED")[1]!.custom_id)!;
    expect(second.messages.filter((message) => message.role === "tool").map((message) => message.content)).toEqual(["one"]);
  });

  it("whose batch cannot be asked (a network error) stays DEFERRED, the call still waiting: a later continue asks again", async () => {
    const batch = memoryBatch([]);
    batch.collect = async () => {
      throw new LlmError("GET http://127.0.0.1:9/v1/batches/batch_1: connection failed (ECONNREFUSED)");
    };
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run);
    const end = await run.continueRun();
    expect(end.status === "DEFERRED" && end.deferred.message).toContain("could not be asked (GET http://127.0.0.1:9/v1/batches/batch_1: connection failed");
    expect(run.ports.journal.runState().batched?.submitted?.batch_id).toBe("batch_1");
    expect(run.of("LLM_ATTEMPT_FAILED")).toEqual([]);
  });

  it("a final answer collected completes the run", async () => {
    const batch = memoryBatch([{ kind: "reply", reply: text("all done"), batchId: "batch_1" }]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run);
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "all done" });
  });

  it("a failed result (expired, errored, cancelled) is the run's model error; continued, the call is queued anew", async () => {
    const batch = memoryBatch([{ kind: "failed", batchId: "batch_1", reason: "batch_expired: This request could not be executed before the completion window expired.", serverCode: "batch_expired" }]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run);
    const end = await run.continueRun();
    expect(end).toMatchObject({ status: "FAILED", error: { type: "LLM_ERROR" } });
    expect(end.status === "FAILED" && end.error.message).toContain("batch_expired");
    expect(run.of("LLM_ATTEMPT_FAILED")).toMatchObject([{ iteration: 1, server_code: "batch_expired", retry_in_ms: null }]);
    await run.continueRun();
    expect(run.of("MODEL_QUEUED").map((queued) => queued.iteration)).toEqual([1, 1]);
    expect(new Set(run.of("MODEL_QUEUED").map((queued) => queued.custom_id)).size).toBe(2);
  });

  it("whose submission's answer was lost stays DEFERRED, saying batch submit finds it", async () => {
    const batch = memoryBatch([]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    submit(run, null);
    const end = await run.continueRun();
    expect(end.status === "DEFERRED" && end.deferred.message).toContain("submission s1");
    expect(batch.collected).toEqual([]);
  });

  it("--live: the queued request is sent to the model as it was queued (no second pre_llm_request), and the run goes on live", async () => {
    const queuing = memoryBatch([]);
    const run = scriptedRun({ turns: [calls(["echo", '{"text":"one"}']), text("done")], batch: queuing });
    await run.run();
    const queuedRequest = queuing.queued.get("run-1-i1-0")!;
    run.ports.batch = { ...queuing, live: true };
    const hooksBefore = run.hooked.filter((hook) => hook.name === "pre_llm_request").length;
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "done" });
    expect(run.requests[0]).toBe(queuedRequest);
    expect(run.hooked.filter((hook) => hook.name === "pre_llm_request")).toHaveLength(hooksBefore + 1);
    expect(run.of("THOUGHT").map((thought) => thought.batch)).toEqual([undefined, undefined]);
    expect(run.progress.some((line) => line.startsWith("[warning]"))).toBe(false);
  });

  it("--live of a call already submitted says its batch may bill it too", async () => {
    const queuing = memoryBatch([]);
    const run = scriptedRun({ turns: [text("done")], batch: queuing });
    await run.run();
    submit(run);
    run.ports.batch = { ...queuing, live: true };
    expect(await run.continueRun()).toEqual({ status: "COMPLETED", result: "done" });
    expect(run.progress).toContainEqual(expect.stringMatching(/^\[warning\] \[1\] the call was submitted \(batch batch_1\); that batch may still answer and bill it/));
  });

  it("a message given with continue drops the queued call: the next request holds the message", async () => {
    const batch = memoryBatch([]);
    const run = scriptedRun({ turns: [], batch });
    await run.run();
    await run.continueRun("also this");
    const [, second] = run.of("MODEL_QUEUED");
    expect(second!.iteration).toBe(1);
    expect(batch.queued.get(second!.custom_id)!.messages.at(-1)).toMatchObject({ role: "user", content: "also this" });
  });
});
