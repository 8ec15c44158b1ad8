// THINK: rebuild the context from the journal, ask the model, record its reply as a THOUGHT.
import { buildContext, countRequest, type BuiltContext, type ContextEnv } from "../context/build.js";
import { BYTES_ESTIMATE } from "../context/window-rule.js";
import { ContextOverflowError, HookBlockedError } from "../errors.js";
import { validateLlmRequestReplacement, validatePostResponseAnnotation } from "../hooks/run-hook.js";
import type { EventOf, JournalEvent } from "../journal/events.js";
import type { FunctionTool, LlmReply, LlmRequest } from "../conversation.js";
import { samplingParams } from "../llm/settings-schema.js";
import { toFunctionTool } from "../tools/function-schema.js";
import { toMcpFunctionTool } from "../tools/mcp/advertise.js";
import { ASK_HUMAN_TOOL } from "./ask-human.js";
import { loadSkillTool } from "./load-skill.js";
import type { RunContext } from "../run/run-context.js";
import { failedAttemptEvent } from "./failed-attempt.js";

/**
 * `events`: the journal as read at the start of this iteration. A request the server refuses as
 * too long is built once more from a smaller window (the move journaled as CONTEXT_WINDOW) and
 * sent again; a second refusal ends the run with CONTEXT_OVERFLOW.
 */
export async function think(ctx: RunContext, iteration: number, events: JournalEvent[]): Promise<EventOf<"THOUGHT">> {
  let built = await prepare(ctx, iteration, events);
  let attempt: Answered;
  try {
    attempt = await ask(ctx, iteration, built);
  } catch (err) {
    if (!(err instanceof ContextOverflowError) || ctx.signal.aborted) throw err;
    // The server's count calibrates a tokenizer's: an estimate from bytes is counted again.
    const sent = built.estimatedTokens !== null && built.estimatedBy !== BYTES_ESTIMATE ? built.estimatedTokens : await countRequest(ctx.budget.model, built.messages, toolsOf(ctx));
    ctx.progress(`[${iteration}] the model's server refused the request as too long; retrying once with fewer iterations in the context`);
    ctx.log(`context overflow at iteration ${iteration}: ${err.message}`);
    built = await prepare(ctx, iteration, ctx.readEvents(), { sizes: err.sizes, sentEstimate: sent }).catch((smaller: unknown) => {
      // Nothing left to drop: the server's words first, then why no smaller request exists.
      throw smaller instanceof ContextOverflowError ? new ContextOverflowError(`${err.message} ${smaller.message}`, err.sizes) : smaller;
    });
    attempt = await ask(ctx, iteration, built);
  }
  const { request, reply, started, durationMs, attempts } = attempt;
  ctx.log(`model call ${iteration}: ${request.messages.length} messages, ${request.tools.length} tools → ${reply.tool_calls.length} tool calls in ${durationMs} ms${describeUsage(reply)}`);
  // Reasoning is for people reading the log or -v; stdout never carries it.
  if (reply.reasoning) ctx.log(`[${iteration}] REASONING: ${oneLine(reply.reasoning, 2000)}`);
  ctx.invocations.write({
    iteration,
    timestamp: new Date(started).toISOString(),
    request,
    reply,
    duration_ms: durationMs,
  });

  await runPostResponseHook(ctx, iteration, reply);

  const thought = ctx.append({
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
  });
  if (thought.type !== "THOUGHT") throw new Error("journal returned a different event than appended");
  if (reply.content) ctx.progress(`[${iteration}] THINK: ${oneLine(reply.content)}`);
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
}

/** The context for this iteration, its window move journaled before anything is sent. */
async function prepare(ctx: RunContext, iteration: number, events: JournalEvent[], overflow?: ContextEnv["overflow"]): Promise<BuiltContext> {
  const built = await buildContext(ctx.agent.context, {
    agentHome: ctx.agent.home,
    cwd: ctx.workDir,
    runId: ctx.runId,
    runDir: ctx.paths.runDir,
    journalPath: ctx.paths.journal,
    events,
    baseEnv: () => ctx.hookBox?.env ?? ctx.childEnv,
    sandbox: ctx.hookBox?.box,
    signal: ctx.signal,
    log: (line) => ctx.log(line),
    budget: ctx.budget,
    tools: toolsOf(ctx),
    skillListings: ctx.agent.skillListings,
    iteration,
    ...(overflow ? { overflow } : {}),
  });
  if (built.windowEvent) ctx.append(built.windowEvent);
  return built;
}

/** pre_llm_request, then the model call. */
async function ask(ctx: RunContext, iteration: number, built: BuiltContext): Promise<Answered> {
  let request = buildRequest(ctx, built.messages);
  const pre = await ctx.hook("pre_llm_request", iteration, request);
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
  ctx.activity({ kind: "model", iteration, model: request.model });
  const reply = await ctx.provider.complete(request, {
    signal: ctx.signal,
    onText: (text) => ctx.activity({ kind: "model-text", iteration, text }),
    onFailedAttempt: (attempt) => {
      failed += 1;
      // Journaled before the wait: a run that fails or dies while retrying keeps every attempt.
      ctx.append(failedAttemptEvent(iteration, attempt, ctx.secrets));
      if (attempt.retryInMs === null) {
        ctx.log(`llm attempt ${attempt.attempt} failed after ${attempt.durationMs} ms, not retried: ${attempt.reason}`);
        return;
      }
      ctx.progress(`[${iteration}] model request failed (${attempt.reason}); retry ${attempt.attempt} in ${attempt.retryInMs} ms`);
      ctx.log(`llm retry ${attempt.attempt} after ${attempt.retryInMs} ms: ${attempt.reason}`);
    },
  });
  ctx.activity({ kind: "idle" });
  return { request, reply, started, durationMs: Date.now() - started, attempts: failed + 1 };
}

// One list per process's run (its agent's tools and its MCP servers'): the context builder keys its count of the tool definitions on it.
const runTools = new WeakMap<RunContext, FunctionTool[]>();

function toolsOf(ctx: RunContext): FunctionTool[] {
  let tools = runTools.get(ctx);
  if (!tools) {
    const skills = ctx.agent.skills.length > 0 ? [loadSkillTool(ctx.agent.skills)] : [];
    tools = [...ctx.agent.tools.map(toFunctionTool), ...(ctx.mcp?.tools ?? []).map(toMcpFunctionTool), ASK_HUMAN_TOOL, ...skills];
    runTools.set(ctx, tools);
  }
  return tools;
}

function buildRequest(ctx: RunContext, messages: LlmRequest["messages"]): LlmRequest {
  return {
    model: ctx.agent.llm.model,
    messages,
    tools: toolsOf(ctx),
    params: samplingParams(ctx.agent.llm),
    ...(ctx.agent.output?.format ? { output_format: ctx.agent.output.format } : {}),
  };
}

async function runPostResponseHook(ctx: RunContext, iteration: number, reply: LlmReply): Promise<void> {
  const post = await ctx.hook("post_llm_response", iteration, reply);
  if (post.kind !== "continue") return;
  const { annotation, warning } = validatePostResponseAnnotation(reply, post.output);
  if (warning) ctx.progress(`[warning] post_llm_response: ${warning}`);
  if (annotation !== undefined) ctx.log(`post_llm_response annotation: ${JSON.stringify(annotation)}`);
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
