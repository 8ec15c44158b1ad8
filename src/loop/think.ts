// THINK: rebuild the context from the journal, ask the model, record its reply as a THOUGHT.
import { countRequest, type BuiltContext, type ContextEnv } from "../context/build.js";
import { BYTES_ESTIMATE } from "../journal/window-state.js";
import { ContextOverflowError, HookBlockedError } from "../errors.js";
import { validateLlmRequestReplacement, validatePostResponseAnnotation } from "../hooks/run-hook.js";
import type { EventOf } from "../journal/events.js";
import type { ShownJournal } from "../journal/shown-journal.js";
import type { LlmReply, LlmRequest } from "../conversation.js";
import { samplingParams } from "../llm/settings-schema.js";
import type { BudgetCharge } from "../llm/types.js";
import type { LoopPorts } from "./ports.js";
import { failedAttemptEvent } from "./failed-attempt.js";
import { counted } from "../plural.js";

/**
 * `journal`: the journal as read at the start of this iteration. A request the server refuses as
 * too long is built once more from a smaller window (the move journaled as CONTEXT_WINDOW) and
 * sent again; a second refusal ends the run with CONTEXT_OVERFLOW.
 */
export async function think(ports: LoopPorts, iteration: number, journal: ShownJournal): Promise<EventOf<"THOUGHT">> {
  let built = await prepare(ports, iteration, journal);
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
    ...(request.messages === built.messages ? { renderedFrom: built.renderedFrom } : {}),
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
    ...(built.estimatedTokens !== null ? { estimated_input_tokens: built.estimatedTokens } : {}),
    ...(built.estimatedBy !== null ? { estimated_by: built.estimatedBy } : {}),
    started_at: new Date(started).toISOString(),
    duration_ms: durationMs,
    attempts,
    ...(charge ? { budget_charge: charge } : {}),
    ...(reply.answered_by !== undefined ? { answered_by: reply.answered_by } : {}),
    ...(reply.reasoning_dropped !== undefined ? { reasoning_dropped: reply.reasoning_dropped } : {}),
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
}

/** The context for this iteration, its window move journaled before anything is sent. */
async function prepare(ports: LoopPorts, iteration: number, journal: ShownJournal, overflow?: ContextEnv["overflow"]): Promise<BuiltContext> {
  const built = await ports.context.build(journal, iteration, overflow);
  if (built.windowEvent) ports.journal.append(built.windowEvent);
  return built;
}

/** pre_llm_request, then the model call. */
async function ask(ports: LoopPorts, iteration: number, built: BuiltContext): Promise<Answered> {
  let request = buildRequest(ports, built.messages);
  const pre = await ports.hook("pre_llm_request", iteration, request);
  if (pre.kind === "block") throw new HookBlockedError(`pre_llm_request hook blocked the model request: ${pre.reason}`);
  if (pre.kind === "continue" && pre.output && "payload" in pre.output) {
    const replaced = validateLlmRequestReplacement(pre.output.payload);
    if (typeof replaced === "string") {
      throw new HookBlockedError(`pre_llm_request hook returned an invalid replacement request: ${replaced}`);
    }
    request = { ...request, ...replaced, params: replaced.params ?? request.params };
  }
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
