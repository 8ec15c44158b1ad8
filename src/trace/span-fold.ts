// The one fold from journal events to OpenTelemetry spans: applied live as events are appended and to a journal read afterwards, it gives the same spans.
import { ORPHANED_RUN } from "../errors.js";
import type { EventOf, JournalEvent } from "../journal/events.js";
import { streamJournal, streamJournalPaced } from "../journal/reader.js";
import { redactSecrets } from "../secrets.js";
import { GEN_AI } from "./genai-names.js";
import { runTraceOf, spanIdOf } from "./trace-ids.js";

type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

/** A finished span as plain data: times in epoch milliseconds, ids in lowercase hex. */
export interface TraceSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: "INTERNAL" | "CLIENT";
  startMs: number;
  endMs: number;
  attributes: Attributes;
  events: { name: string; timeMs: number; attributes: Attributes }[];
  links: { traceId: string; spanId: string }[];
  status: { code: "UNSET" | "OK" | "ERROR"; message?: string };
  /** The host of the invocation the span belongs to (its ENGINE_START's), for the resource's host.name; null for journals from before it was recorded. */
  hostName: string | null;
}

interface SpanFoldOptions {
  /** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: messages, tool arguments and results go on the spans. */
  captureContent: boolean;
  /** Strings removed from every attribute (the journal is already redacted; live export removes the run's secrets again). */
  secrets?: readonly string[];
}

interface SpanFold {
  /** Folds one event; returns the spans it ended. */
  push(event: JournalEvent): TraceSpan[];
  /** The journal ends here: spans still open (a run killed mid-way) end at the last journaled time, as ERROR, marked incomplete. */
  finish(): TraceSpan[];
}

/** Set on spans a journal left open: the engine stopped before it could journal their end. */
const INCOMPLETE_ATTRIBUTE = "delta.run.incomplete";

interface Invocation {
  span: TraceSpan;
  model: string | null;
  provider: string | null;
  inputMessages: { role: string; content: string }[];
}

export type JournalSpanOptions = SpanFoldOptions & { warn?: (line: string) => void };

/** Streams the journal at `path` through the fold, handing each span to `emit` as it ends: neither the events nor the spans are held. */
export function foldJournalSpans(path: string, options: JournalSpanOptions, emit: (span: TraceSpan) => void): void {
  const fold = createSpanFold(options);
  streamJournal(path, (event) => fold.push(event).forEach(emit), { warn: options.warn });
  fold.finish().forEach(emit);
}

/** As foldJournalSpans, awaiting `pause` between windows of the journal: a sender waits there until its collector has taken what was folded. */
export async function foldJournalSpansPaced(path: string, options: JournalSpanOptions, emit: (span: TraceSpan) => void, pause: () => Promise<void>): Promise<void> {
  const fold = createSpanFold(options);
  await streamJournalPaced(path, (event) => fold.push(event).forEach(emit), pause, { warn: options.warn });
  fold.finish().forEach(emit);
}

export function createSpanFold(options: SpanFoldOptions): SpanFold {
  let trace: { traceId: string; parentSpanId: string | null } | null = null;
  let invocation: Invocation | null = null;
  let invocations = 0;
  let host: string | null = null;
  let lastMs = 0;
  let attempts: EventOf<"LLM_ATTEMPT_FAILED">[] = [];
  const tools = new Map<string, TraceSpan>();
  const waits = new Map<string, TraceSpan>();
  let takeover: EventOf<"ERROR"> | null = null;
  const content = (value: unknown): string => {
    const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
    return options.secrets?.length ? (redactSecrets(text, options.secrets, { fields: false }) as string) : text;
  };

  function open(name: string, kind: TraceSpan["kind"], seq: number, startMs: number, attributes: Attributes, parent: string | null): TraceSpan {
    return { traceId: trace!.traceId, spanId: spanIdOf(trace!.traceId, seq), parentSpanId: parent, name, kind, startMs, endMs: startMs, attributes, events: [], links: [], status: { code: "UNSET" }, hostName: host };
  }

  /** Ends every open span at the last journaled time: the process that journaled them stopped without ending them. */
  function abandon(reason: string): TraceSpan[] {
    const ended: TraceSpan[] = [];
    const end = (span: TraceSpan): void => {
      span.endMs = Math.max(span.startMs, lastMs);
      span.status = { code: "ERROR", message: reason };
      span.attributes[INCOMPLETE_ATTRIBUTE] = true;
      ended.push(span);
    };
    if (attempts.length > 0 && invocation) ended.push(failedCall(invocation, reason, true));
    for (const span of [...waits.values(), ...tools.values()]) end(span);
    waits.clear();
    tools.clear();
    if (invocation) end(closeInvocation(invocation));
    invocation = null;
    return ended;
  }

  function closeInvocation(current: Invocation): TraceSpan {
    if (options.captureContent && current.inputMessages.length > 0) current.span.attributes[GEN_AI.inputMessages] = content(current.inputMessages);
    return current.span;
  }

  /** A model call whose every attempt failed: a chat span from its first attempt to the end of its last, ERROR. */
  function failedCall(current: Invocation, reason: string, incomplete: boolean): TraceSpan {
    const first = attempts[0]!;
    const last = attempts[attempts.length - 1]!;
    const span = open(`chat ${current.model ?? ""}`.trim(), "CLIENT", first.seq, Date.parse(first.started_at), chatAttributes(current), current.span.spanId);
    span.endMs = Date.parse(last.started_at) + last.duration_ms;
    addAttempts(span);
    span.status = { code: "ERROR", message: reason };
    span.attributes[GEN_AI.errorType] = last.http_status !== undefined ? String(last.http_status) : "network";
    if (incomplete) span.attributes[INCOMPLETE_ATTRIBUTE] = true;
    return span;
  }

  function chatAttributes(current: Invocation): Attributes {
    return {
      [GEN_AI.operation]: "chat",
      ...(current.provider ? { [GEN_AI.providerName]: current.provider } : {}),
      ...(current.model ? { [GEN_AI.requestModel]: current.model } : {}),
    };
  }

  function addAttempts(span: TraceSpan): void {
    for (const attempt of attempts) {
      span.events.push({
        name: "delta.llm.attempt_failed",
        timeMs: Date.parse(attempt.started_at) + attempt.duration_ms,
        attributes: {
          "delta.attempt": attempt.attempt,
          "delta.attempt.duration_ms": attempt.duration_ms,
          "delta.attempt.reason": content(attempt.reason),
          ...(attempt.http_status !== undefined ? { "http.response.status_code": attempt.http_status } : {}),
          ...(attempt.server_code !== undefined ? { "delta.attempt.server_code": content(attempt.server_code) } : {}),
          ...(attempt.retry_in_ms !== null ? { "delta.attempt.retry_in_ms": attempt.retry_in_ms } : {}),
        },
      });
    }
    attempts = [];
  }

  function engineStart(event: EventOf<"ENGINE_START">): TraceSpan[] {
    const ended = trace === null ? [] : abandon("the engine stopped before it journaled the end of its invocation");
    trace ??= runTraceOf(event);
    invocations += 1;
    const config = event.config;
    host = config.hostname ?? null;
    const agentName = config.agent_name ?? null;
    const model = config.model ?? null;
    const provider = providerName(config.provider);
    const span = open(agentName ? `invoke_agent ${agentName}` : "invoke_agent", "INTERNAL", event.seq, Date.parse(event.timestamp), {
      [GEN_AI.operation]: "invoke_agent",
      ...(agentName ? { [GEN_AI.agentName]: agentName } : {}),
      [GEN_AI.conversationId]: event.run_id,
      ...(model ? { [GEN_AI.requestModel]: model } : {}),
      ...(provider ? { [GEN_AI.providerName]: provider } : {}),
      "delta.invocation": invocations,
      "delta.engine.version": event.engine_version,
    }, trace.parentSpanId);
    if (event.link_trace_id !== undefined && event.link_span_id !== undefined) span.links.push({ traceId: event.link_trace_id, spanId: event.link_span_id });
    if (takeover) {
      span.events.push({ name: "delta.run.takeover", timeMs: Date.parse(takeover.timestamp), attributes: { "delta.takeover.message": content(takeover.error_message) } });
      takeover = null;
    }
    invocation = { span, model, provider, inputMessages: [] };
    return ended;
  }

  function thought(event: EventOf<"THOUGHT">, current: Invocation): TraceSpan {
    const endMs = event.started_at !== undefined && event.duration_ms !== undefined ? Date.parse(event.started_at) + event.duration_ms : Date.parse(event.timestamp);
    const startMs = event.started_at !== undefined ? Date.parse(event.started_at) : (attempts[0] ? Date.parse(attempts[0].started_at) : endMs);
    // The model and provider that answered: a fallback's, when the primary gave up.
    const by = event.answered_by;
    const attributes = by === undefined ? chatAttributes(current) : { ...chatAttributes(current), [GEN_AI.providerName]: providerName(by.provider) ?? by.provider, [GEN_AI.requestModel]: by.model, "delta.llm.endpoint": by.base_url };
    const span = open(`chat ${by?.model ?? current.model ?? event.model}`, "CLIENT", event.seq, startMs, attributes, current.span.spanId);
    span.endMs = endMs;
    const usage = event.usage;
    Object.assign(span.attributes, {
      [GEN_AI.responseModel]: event.model,
      ...(event.finish_reason !== undefined ? { [GEN_AI.finishReasons]: [event.finish_reason] } : {}),
      ...(usage ? { [GEN_AI.inputTokens]: usage.input_tokens, [GEN_AI.outputTokens]: usage.output_tokens } : {}),
      ...(usage?.cached_input_tokens !== undefined ? { [GEN_AI.cacheReadInputTokens]: usage.cached_input_tokens } : {}),
      ...(usage?.cache_write_input_tokens !== undefined ? { [GEN_AI.cacheCreationInputTokens]: usage.cache_write_input_tokens } : {}),
      ...(usage?.reasoning_tokens !== undefined ? { [GEN_AI.reasoningOutputTokens]: usage.reasoning_tokens } : {}),
      "delta.iteration": event.iteration,
      ...(event.attempts !== undefined ? { "delta.llm.attempts": event.attempts } : {}),
    });
    if (options.captureContent) {
      const parts = [
        ...(event.content !== null ? [{ type: "text", content: event.content }] : []),
        ...event.tool_calls.map((call) => ({ type: "tool_call", id: call.id, name: call.name, arguments: call.arguments })),
      ];
      span.attributes[GEN_AI.outputMessages] = content([{ role: "assistant", parts, ...(event.finish_reason !== undefined ? { finish_reason: event.finish_reason } : {}) }]);
    }
    addAttempts(span);
    return span;
  }

  function actionRequest(event: EventOf<"ACTION_REQUEST">, current: Invocation): void {
    const command = event.resolved_command;
    const span = open(`execute_tool ${event.tool_name}`, "INTERNAL", event.seq, Date.parse(event.timestamp), {
      [GEN_AI.operation]: "execute_tool",
      [GEN_AI.toolName]: event.tool_name,
      [GEN_AI.toolCallId]: event.action_id,
      [GEN_AI.toolType]: command?.[0] === "mcp" ? "extension" : "function",
      ...(command?.[0] === "mcp" && command.length === 3 ? { "delta.mcp.server": command[1]!, "delta.mcp.tool": command[2]! } : {}),
      "delta.iteration": event.iteration,
      ...(event.rerun_of !== undefined ? { "delta.tool.rerun_of_seq": event.rerun_of } : {}),
    }, current.span.spanId);
    if (options.captureContent) span.attributes[GEN_AI.toolCallArguments] = content(event.tool_args);
    tools.set(event.action_id, span);
  }

  function actionResult(event: EventOf<"ACTION_RESULT">, current: Invocation): TraceSpan[] {
    const span = tools.get(event.action_id);
    if (!span) {
      // The result of a call an earlier invocation asked (an ask_human answered by `continue`).
      current.span.events.push({ name: "delta.tool.result", timeMs: Date.parse(event.timestamp), attributes: { [GEN_AI.toolName]: event.tool_name, [GEN_AI.toolCallId]: event.action_id, "delta.tool.status": event.status } });
      return [];
    }
    tools.delete(event.action_id);
    span.endMs = Date.parse(event.timestamp);
    span.attributes["delta.tool.status"] = event.status;
    if (event.exit_code !== null) span.attributes["delta.tool.exit_code"] = event.exit_code;
    if (event.status !== "SUCCESS") {
      // The observation is content (a hook's or the tool's own words): the message quotes it only when content is captured.
      const said = options.captureContent ? `: ${event.observation_content.slice(0, 200)}` : "";
      span.status = { code: "ERROR", message: content(`${event.status}${event.exit_code !== null ? ` (exit ${event.exit_code})` : ""}${said}`) };
      span.attributes[GEN_AI.errorType] = event.status;
    }
    if (options.captureContent) span.attributes[GEN_AI.toolCallResult] = content(event.observation_content);
    return [span];
  }

  function humanRequest(event: EventOf<"HUMAN_INPUT_REQUEST">, current: Invocation): void {
    const span = open("ask_human", "INTERNAL", event.seq, Date.parse(event.timestamp), {
      [GEN_AI.toolCallId]: event.action_id,
      "delta.human_input.request_id": event.request_id,
      "delta.human_input.type": event.input_type,
      "delta.human_input.sensitive": event.sensitive,
    }, tools.get(event.action_id)?.spanId ?? current.span.spanId);
    if (options.captureContent) span.attributes["delta.human_input.prompt"] = content(event.prompt);
    waits.set(event.action_id, span);
  }

  function humanReceived(event: EventOf<"HUMAN_INPUT_RECEIVED">, current: Invocation): TraceSpan[] {
    const span = waits.get(event.action_id);
    if (!span) {
      current.span.events.push({ name: "delta.human_input.received", timeMs: Date.parse(event.timestamp), attributes: { [GEN_AI.toolCallId]: event.action_id, "delta.human_input.request_id": event.request_id } });
      return [];
    }
    waits.delete(event.action_id);
    span.endMs = Date.parse(event.timestamp);
    span.attributes["delta.human_input.answered"] = true;
    return [span];
  }

  function engineEnd(event: EventOf<"ENGINE_END">, current: Invocation): TraceSpan[] {
    const endMs = Date.parse(event.timestamp);
    const ended: TraceSpan[] = [];
    if (attempts.length > 0) ended.push(failedCall(current, "the model call failed", false));
    // Spans still open at a clean end wait for a human (WAITING_FOR_INPUT): they end with the invocation.
    for (const span of [...waits.values(), ...tools.values()]) {
      span.endMs = endMs;
      span.attributes["delta.waiting_for_input"] = true;
      ended.push(span);
    }
    waits.clear();
    tools.clear();
    current.span.endMs = endMs;
    current.span.attributes["delta.run.status"] = event.status;
    current.span.attributes["delta.iterations"] = event.final_iteration;
    if (event.status === "FAILED" || event.status === "INTERRUPTED") current.span.status = { code: "ERROR", message: current.span.status.message ?? event.status };
    // A deferred run waits, it did not fail: the span says for what and until when.
    if (event.deferred) {
      current.span.attributes["delta.deferred.reason"] = event.deferred.reason;
      if (event.deferred.resume_after !== null) current.span.attributes["delta.deferred.resume_after"] = event.deferred.resume_after;
    }
    ended.push(closeInvocation(current));
    invocation = null;
    return ended;
  }

  function push(event: JournalEvent): TraceSpan[] {
    if (trace === null && event.type !== "ENGINE_START") return [];
    const ended = fold(event);
    lastMs = Math.max(lastMs, Date.parse(event.timestamp));
    return ended;
  }

  function fold(event: JournalEvent): TraceSpan[] {
    if (event.type === "ENGINE_START") return engineStart(event);
    const current = invocation;
    if (current === null) {
      // Between invocations only the janitor writes: a takeover, and the end of the invocation it found dead.
      if (event.type === "ERROR" && event.error_type === ORPHANED_RUN) takeover = event;
      return [];
    }
    switch (event.type) {
      case "USER_MESSAGE":
        if (options.captureContent) current.inputMessages.push({ role: event.source === "engine" ? "system" : "user", content: event.content });
        return [];
      case "THOUGHT":
        return [thought(event, current)];
      case "LLM_ATTEMPT_FAILED":
        attempts.push(event);
        return [];
      case "ACTION_REQUEST":
        actionRequest(event, current);
        return [];
      case "ACTION_RESULT":
        return actionResult(event, current);
      case "HUMAN_INPUT_REQUEST":
        humanRequest(event, current);
        return [];
      case "HUMAN_INPUT_RECEIVED":
        return humanReceived(event, current);
      case "ERROR":
        if (event.error_type === ORPHANED_RUN) {
          takeover = event;
          return abandon("the engine process stopped without journaling an end; a later engine took the run over");
        }
        current.span.status = { code: "ERROR", message: content(`${event.error_type}: ${event.error_message}`.slice(0, 300)) };
        current.span.attributes[GEN_AI.errorType] = event.error_type;
        return [];
      case "CONTEXT_WINDOW":
        current.span.events.push({
          name: "delta.context.window_moved",
          timeMs: Date.parse(event.timestamp),
          attributes: { "delta.iteration": event.iteration, "delta.window.reason": event.reason, "delta.window.first_iteration": event.first_iteration, "delta.window.dropped_from": event.dropped_from, "delta.window.dropped_to": event.dropped_to, "delta.window.limit": event.limit },
        });
        return [];
      case "HOOK_RESULT":
        current.span.events.push({
          name: "delta.hook",
          timeMs: Date.parse(event.started_at) + event.duration_ms,
          attributes: {
            "delta.hook.name": event.hook,
            "delta.hook.outcome": event.outcome,
            ...(event.exit_code !== null ? { "delta.hook.exit_code": event.exit_code } : {}),
            "delta.hook.timed_out": event.timed_out,
            "delta.hook.duration_ms": event.duration_ms,
            "delta.hook.record": event.record,
            "delta.iteration": event.iteration,
          },
        });
        return [];
      case "REPLAY_DIVERGED":
        current.span.events.push({
          name: "delta.replay.diverged",
          timeMs: Date.parse(event.timestamp),
          attributes: { "delta.iteration": event.iteration, "delta.replay.recorded_call": event.recorded_call, "delta.replay.parts": event.parts.map((part) => part.part).join(", "), "delta.replay.then": event.then },
        });
        return [];
      case "MODEL_QUEUED":
      case "MODEL_SUBMITTED":
        current.span.events.push({
          name: event.type === "MODEL_QUEUED" ? "delta.batch.queued" : "delta.batch.submitted",
          timeMs: Date.parse(event.timestamp),
          attributes: { "delta.iteration": event.iteration, "delta.batch.custom_id": event.custom_id, ...(event.type === "MODEL_SUBMITTED" && event.batch_id !== null ? { "delta.batch.id": event.batch_id } : {}) },
        });
        return [];
      case "ENGINE_END":
        return engineEnd(event, current);
      default: {
        const unknown: never = event;
        throw new Error(`No span rule for event ${JSON.stringify(unknown)}`);
      }
    }
  }

  return { push, finish: () => (trace === null ? [] : abandon("the journal ends before the engine journaled the end of its invocation")) };
}

/** gen_ai.provider.name for the provider ENGINE_START journaled. */
function providerName(provider: string | undefined): string | null {
  switch (provider) {
    case "openai-compatible":
    case "openai-responses":
      return "openai";
    case "anthropic":
      return "anthropic";
    case "replay":
      return "delta.replay";
    default:
      return provider ?? null;
  }
}
