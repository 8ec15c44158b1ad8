// THINK: rebuild the context from the journal, ask the model, record its reply as a THOUGHT.
import { countRequest, type BuiltContext, type ContextEnv } from "../context/build.js";
import { BYTES_ESTIMATE } from "../journal/window-state.js";
import { ContextOverflowError, DeferredError, HookBlockedError, LlmError } from "../errors.js";
import { validateLlmRequestReplacement, validatePostResponseAnnotation } from "../hooks/run-hook.js";
import type { EventOf } from "../journal/events.js";
import type { BatchedCall } from "../journal/run-state.js";
import type { ShownJournal } from "../journal/shown-journal.js";
import type { LlmReply, LlmRequest } from "../conversation.js";
import { samplingParams } from "../llm/settings-schema.js";
import type { BudgetCharge } from "../llm/types.js";
import type { BatchAnswer, LoopBatch, LoopPorts } from "./ports.js";
import { attemptText, failedAttemptEvent } from "./failed-attempt.js";
import { counted } from "../plural.js";

/**
 * `journal`: the journal as read at the start of this iteration. A request the server refuses as
 * too long is built once more from a smaller window (the move journaled as CONTEXT_WINDOW) and
 * sent again; a second refusal ends the run with CONTEXT_OVERFLOW.
 */
export async function think(ports: LoopPorts, iteration: number, journal: ShownJournal): Promise<EventOf<"THOUGHT">> {
  if (ports.batch !== null) {
    const batched = ports.journal.runState().batched;
    if (batched !== null) return record(ports, iteration, await answerBatched(ports, ports.batch, batched), null);
  }
  let built = await prepare(ports, iteration, journal);
  if (ports.batch !== null && ports.batch.queues && !ports.batch.live) return queue(ports, ports.batch, iteration, built);
  let attempt: Answered;
  try {
    attempt = await ask(ports, iteration, built);
  } catch (err) {
    if (!(err instanceof ContextOverflowError) || ports.signal.aborted) throw err;
    // The server's count calibrates a tokenizer's: an estimate from bytes is counted again.
    const sent = built.estimatedTokens !== null && built.estimatedBy !== BYTES_ESTIMATE ? built.estimatedTokens : await countRequest(ports.settings.budget.model, built.messages, ports.tools.advertised);
    ports.log.progress(`[${iteration}] the model's server refused the request as too long; retrying once with fewer iterations in the context`);
    ports.log.log(`context overflow at iteration ${iteration}: ${err.message}`);
    built = await prepare(ports, iteration, ports.journal.read(), { sizes: err.sizes, sentEstimate: sent }).catch((smaller: unknown) => {
      // Nothing left to drop: the server's words first, then why no smaller request exists.
      throw smaller instanceof ContextOverflowError ? new ContextOverflowError(`${err.message} ${smaller.message}`, err.sizes) : smaller;
    });
    attempt = await ask(ports, iteration, built);
  }
  return record(ports, iteration, attempt, built);
}

/** The answered call journaled: its io record, post_llm_response, the THOUGHT. `built`: the context it was sent with (none for a batched call, whose request was built when it was queued). */
async function record(ports: LoopPorts, iteration: number, attempt: Answered, built: BuiltContext | null): Promise<EventOf<"THOUGHT">> {
  const { request, reply, started, durationMs, attempts, charge } = attempt;
  ports.log.log(`model call ${iteration}: ${counted(request.messages.length, "message")}, ${counted(request.tools.length, "tool")} → ${counted(reply.tool_calls.length, "tool call")} in ${durationMs} ms${describeUsage(reply)}`);
  // Reasoning is for people reading the log or -v; stdout never carries it.
  if (reply.reasoning) ports.log.log(`[${iteration}] REASONING: ${oneLine(reply.reasoning, 2000)}`);
  ports.records.invocation({
    iteration,
    timestamp: new Date(started).toISOString(),
    request,
    reply,
    duration_ms: durationMs,
    ...(built !== null && request.messages === built.messages ? { renderedFrom: built.renderedFrom } : {}),
  });

  await runPostResponseHook(ports, iteration, reply);

  const thought = ports.journal.append({
    type: "THOUGHT",
    iteration,
    content: reply.content,
    tool_calls: reply.tool_calls,
    usage: reply.usage,
    model: reply.model || request.model,
    ...(reply.finish_reason !== null ? { finish_reason: reply.finish_reason } : {}),
    ...(reply.reasoning !== undefined ? { reasoning: reply.reasoning } : {}),
    ...(reply.provider_data !== undefined ? { provider_data: reply.provider_data } : {}),
    ...(built !== null && built.estimatedTokens !== null ? { estimated_input_tokens: built.estimatedTokens } : {}),
    ...(built !== null && built.estimatedBy !== null ? { estimated_by: built.estimatedBy } : {}),
    started_at: new Date(started).toISOString(),
    duration_ms: durationMs,
    attempts,
    ...(charge ? { budget_charge: charge } : {}),
    ...(reply.answered_by !== undefined ? { answered_by: reply.answered_by } : {}),
    ...(reply.reasoning_dropped !== undefined ? { reasoning_dropped: reply.reasoning_dropped } : {}),
    ...(attempt.batch !== undefined ? { batch: attempt.batch } : {}),
  });
  if (reply.content) ports.log.progress(`[${iteration}] THINK: ${oneLine(reply.content)}`);
  return thought;
}

interface Answered {
  request: LlmRequest;
  reply: LlmReply;
  /** Epoch ms when the call's first attempt was sent. */
  started: number;
  /** From the first attempt sent to the reply read, failed attempts and waits included. */
  durationMs: number;
  attempts: number;
  /** What a budget counted for the reply beyond its usage (it reported none). */
  charge: BudgetCharge | null;
  /** The batch that answered the call, when it went through the provider's batch API. */
  batch?: { batch_id: string; custom_id: string };
}

/**
 * Queues the call instead of sending it (llm.batch): pre_llm_request runs now, on the request the batch will send; the
 * request is recorded and MODEL_QUEUED journaled; with --submit it is sent in a batch of its own at once. The run then
 * ends DEFERRED MODEL_BATCHED: a later continue collects the reply once the batch has ended.
 */
async function queue(ports: LoopPorts, batch: LoopBatch, iteration: number, built: BuiltContext): Promise<never> {
  const request = await hookedRequest(ports, iteration, buildRequest(ports, built.messages));
  // The run's own limits hold a queued call as a live one: one that could pass them is not queued (DEFERRED BUDGET_EXHAUSTED).
  // Nothing stays reserved: the run's spend is its journal's, the batch's reply counted when it is collected.
  const admission = await ports.budget.admit(request, iteration);
  admission.settle({ failure: { kind: "transient", reason: "queued for a batch, not sent", unbilled: true } });
  const queued = ports.journal.append({ type: "MODEL_QUEUED", iteration, ...batch.queue(iteration, request) });
  ports.journal.sync();
  ports.log.progress(`[${iteration}] model call queued for the provider's batch API (custom id ${queued.custom_id})`);
  if (batch.submitOwn !== null) {
    await batch.submitOwn(queued);
    throw batchDeferral("Its model call was submitted in a batch of its own; `delta continue --due` (or `delta continue`) collects the reply once the batch has ended.");
  }
  throw batchDeferral(`Its model call is queued for the provider's batch API: \`delta batch submit -w ${ports.settings.workDir}\` sends it, then \`delta continue --due\` collects the reply once the batch has ended.`);
}

/** The reply to the call waiting in a batch: collected from its ended batch, or (--live) asked of the model now; else the run stays deferred. */
async function answerBatched(ports: LoopPorts, batch: LoopBatch, call: BatchedCall): Promise<Answered> {
  const { queued, submitted } = call;
  const request = batch.request(queued);
  if (batch.live) {
    ports.log.progress(`[${queued.iteration}] --live: the call queued for the batch API (custom id ${queued.custom_id}) is sent now instead`);
    // Never billed twice silently: a batch that holds the call (or may) still answers it, and bills it.
    if (submitted !== null) ports.log.progress(`[warning] [${queued.iteration}] the call was submitted (${submitted.batch_id === null ? `submission ${submitted.submission_id}, whose answer was lost` : `batch ${submitted.batch_id}`}); that batch may still answer and bill it: \`delta batch cancel\` stops it`);
    return send(ports, queued.iteration, request);
  }
  if (submitted === null || submitted.batch_id === null) {
    const why = submitted === null ? "is queued and not yet submitted: `delta batch submit` sends it" : `was being submitted (submission ${submitted.submission_id}) when its answer was lost: \`delta batch submit\` finds the batch or says what to do`;
    throw batchDeferral(`Its model call (custom id ${queued.custom_id}) ${why}; \`delta continue --live\` sends it live instead.`);
  }
  let answer: BatchAnswer | null;
  try {
    answer = await batch.collect(call);
  } catch (err) {
    // The batch could not be asked (a network error, a reply not of its shape): the call still waits in it.
    if (!(err instanceof LlmError) || ports.signal.aborted) throw err;
    throw batchDeferral(`Its model call waits in batch ${submitted.batch_id}, which could not be asked (${err.message}); \`delta continue --due\` asks again.`);
  }
  if (answer === null) throw batchDeferral(`Its model call waits in batch ${submitted.batch_id}, which has not ended yet; \`delta continue --due\` asks again.`);
  const started = Date.parse(queued.timestamp);
  if (answer.kind === "failed") {
    ports.journal.append({
      type: "LLM_ATTEMPT_FAILED",
      iteration: queued.iteration,
      attempt: 1,
      started_at: queued.timestamp,
      duration_ms: Math.max(0, Date.now() - started),
      reason: attemptText(answer.reason, ports.settings.secrets),
      ...(answer.httpStatus !== undefined ? { http_status: answer.httpStatus } : {}),
      ...(answer.serverMessage !== undefined ? { server_message: attemptText(answer.serverMessage, ports.settings.secrets) } : {}),
      ...(answer.serverCode !== undefined ? { server_code: attemptText(answer.serverCode, ports.settings.secrets) } : {}),
      retry_in_ms: null,
    });
    throw new LlmError(`Batch ${answer.batchId} ended without a reply to this run's model call (custom id ${queued.custom_id}): ${answer.reason}. Continue the run to queue the call again (or --live to send it now).`);
  }
  ports.log.progress(`[${queued.iteration}] collected the reply from batch ${answer.batchId}`);
  return { request, reply: answer.reply, started, durationMs: Math.max(0, Date.now() - started), attempts: 1, charge: null, batch: { batch_id: answer.batchId, custom_id: queued.custom_id } };
}

function batchDeferral(message: string): DeferredError {
  return new DeferredError({ reason: "MODEL_BATCHED", resumeAfter: null, message: `The run is deferred. ${message}` });
}

/** The context for this iteration, its window move journaled before anything is sent. */
async function prepare(ports: LoopPorts, iteration: number, journal: ShownJournal, overflow?: ContextEnv["overflow"]): Promise<BuiltContext> {
  const built = await ports.context.build(journal, iteration, overflow);
  if (built.windowEvent) ports.journal.append(built.windowEvent);
  return built;
}

/** pre_llm_request, then the model call. */
async function ask(ports: LoopPorts, iteration: number, built: BuiltContext): Promise<Answered> {
  return send(ports, iteration, await hookedRequest(ports, iteration, buildRequest(ports, built.messages)));
}

/** The request as pre_llm_request leaves it: passed, replaced, or blocked (thrown). */
async function hookedRequest(ports: LoopPorts, iteration: number, built: LlmRequest): Promise<LlmRequest> {
  let request = built;
  const pre = await ports.hook("pre_llm_request", iteration, request);
  if (pre.kind === "block") throw new HookBlockedError(`pre_llm_request hook blocked the model request: ${pre.reason}`);
  if (pre.kind === "continue" && pre.output && "payload" in pre.output) {
    const replaced = validateLlmRequestReplacement(pre.output.payload);
    if (typeof replaced === "string") {
      throw new HookBlockedError(`pre_llm_request hook returned an invalid replacement request: ${replaced}`);
    }
    request = { ...request, ...replaced, params: replaced.params ?? request.params };
  }
  return request;
}

/** The model call, each attempt admitted by the run's budgets. */
async function send(ports: LoopPorts, iteration: number, request: LlmRequest): Promise<Answered> {
  const started = Date.now();
  let failed = 0;
  let replyCharge: BudgetCharge | null = null;
  ports.log.activity({ kind: "model", iteration, model: request.model });
  const reply = await ports.model.complete(request, {
    signal: ports.signal,
    // The request as sent: a fallback's asks its own model, priced at its own price.
    admit: async (sent) => {
      const admission = await ports.budget.admit(sent, iteration);
      return {
        settle: (outcome) => {
          const charge = admission.settle(outcome);
          if ("reply" in outcome) replyCharge = charge;
          return charge;
        },
      };
    },
    onFallback: (move) => {
      const to = `${move.to.model} (${move.to.provider} ${move.to.base_url})`;
      ports.log.progress(`[${iteration}] model ${move.from.model} is ${move.why === "overloaded" ? "still overloaded after its retries" : "retired or unknown to its endpoint"}; asking the fallback ${to}`);
      ports.log.log(`fallback at iteration ${iteration} from ${move.from.model} (${move.from.provider} ${move.from.base_url}) to ${to}: ${move.error.message}`);
    },
    onText: (text) => ports.log.activity({ kind: "model-text", iteration, text }),
    onFailedAttempt: (attempt) => {
      failed += 1;
      // Journaled before the wait: a run that fails or dies while retrying keeps every attempt.
      ports.journal.append(failedAttemptEvent(iteration, attempt, ports.settings.secrets));
      if (attempt.retryInMs === null) {
        ports.log.log(`llm attempt ${attempt.attempt} failed after ${attempt.durationMs} ms, not retried: ${attempt.reason}`);
        return;
      }
      ports.log.progress(`[${iteration}] model request failed (${attempt.reason}); retry ${attempt.attempt} in ${attempt.retryInMs} ms`);
      ports.log.log(`llm retry ${attempt.attempt} after ${attempt.retryInMs} ms: ${attempt.reason}`);
    },
  });
  ports.log.activity({ kind: "idle" });
  return { request, reply, started, durationMs: Date.now() - started, attempts: failed + 1, charge: replyCharge };
}

function buildRequest(ports: LoopPorts, messages: LlmRequest["messages"]): LlmRequest {
  return {
    model: ports.settings.llm.model,
    messages,
    tools: ports.tools.advertised,
    params: samplingParams(ports.settings.llm),
    ...(ports.settings.output?.format ? { output_format: ports.settings.output.format } : {}),
  };
}

async function runPostResponseHook(ports: LoopPorts, iteration: number, reply: LlmReply): Promise<void> {
  const post = await ports.hook("post_llm_response", iteration, reply);
  if (post.kind !== "continue") return;
  const { annotation, warning } = validatePostResponseAnnotation(reply, post.output);
  if (warning) ports.log.progress(`[warning] post_llm_response: ${warning}`);
  if (annotation !== undefined) ports.log.log(`post_llm_response annotation: ${JSON.stringify(annotation)}`);
}

function describeUsage(reply: LlmReply): string {
  const usage = reply.usage;
  if (!usage) return "";
  const cacheParts = [usage.cached_input_tokens ? `${usage.cached_input_tokens} cached` : "", usage.cache_write_input_tokens ? `${usage.cache_write_input_tokens} written to cache` : ""].filter(Boolean);
  const cached = cacheParts.length > 0 ? ` (${cacheParts.join(", ")})` : "";
  const reasoning = usage.reasoning_tokens ? ` (${usage.reasoning_tokens} reasoning)` : "";
  return `, ${usage.input_tokens} in${cached} / ${usage.output_tokens} out${reasoning} tokens${reply.finish_reason ? `, finish_reason ${reply.finish_reason}` : ""}`;
}

export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
