// One model request and its reply, whole or streamed, under a whole-attempt or an idle timeout; each wire protocol says what to send and how to read the reply.
import type { LlmReply } from "../conversation.js";
import { statusFailure, thrownFailure, type AttemptFailure, type ProtocolReading } from "./failure.js";
import { sendHttp, type HttpExchange } from "./transport/http-client.js";
import { nestsDeeperThan } from "../json-depth.js";
import { wireJson } from "./wire-json.js";
import type { ProxyEnv } from "./transport/proxy-env.js";
import { looksLikeSse, parseSse, sseEvents, type SseEvent } from "./transport/sse.js";

export interface AttemptSettings {
  url: URL;
  /** Read the reply as server-sent events: the clock is `idleTimeoutMs` of silence, and the whole reply is bounded by `bounds.maxReplyMs`. */
  stream: boolean;
  /** The whole attempt, request to last byte: always for a whole reply; for a streamed one only when `explicitTimeout`. */
  timeoutMs: number;
  /** llm.timeout_ms was set: it bounds a streamed attempt end to end as well. */
  explicitTimeout: boolean;
  idleTimeoutMs: number;
  bounds: ReplyBounds;
  env: ProxyEnv;
}

/** What one reply may be, whatever the server sends: each past its bound is a final model error naming its setting. */
export interface ReplyBounds {
  /** llm.max_reply_ms: a streamed reply's whole duration (llm.timeout_ms, when set, may end it sooner). */
  maxReplyMs: number;
  /** llm.max_reply_bytes: the decoded body's size. */
  maxReplyBytes: number;
  /** llm.max_tool_calls: tool calls in one reply. */
  maxToolCalls: number;
  /** llm.max_reply_depth: nesting of objects and arrays in the reply's JSON. */
  maxReplyDepth: number;
}

export const DEFAULT_REPLY_BOUNDS: ReplyBounds = { maxReplyMs: 600_000, maxReplyBytes: 64 << 20, maxToolCalls: 128, maxReplyDepth: 64 };

/** Puts a protocol's event stream back together as the body a whole reply would have had. */
export interface StreamAssembler {
  push(event: SseEvent): void;
  result(): unknown;
}

/** What one attempt sends and how it reads the answer, from its protocol's table (wire-protocol.ts). */
interface WireExchange {
  /** The protocol's own headers: its key, its version. */
  headers: Record<string, string>;
  body: unknown;
  /** A new assembler for this protocol's event stream. */
  assembler: () => StreamAssembler;
  /** The whole reply body as a reply; throws UnusableReplyError or ErrorBodyError when it is not one. */
  toReply: (body: unknown) => LlmReply;
  /** The protocol's error codes and its test for a refusal of what this request sent back. */
  reading: ProtocolReading;
  /** The reply text one event of the protocol's stream carries, if any. */
  textDelta: (event: SseEvent) => string | undefined;
}

/** Carries a classified failure out of one attempt to the retry loop. */
export class AttemptFailed extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

/** Resolves with the reply, or rejects with AttemptFailed, or with the caller's abort reason once `signal` aborts. */
export async function attemptOnce(settings: AttemptSettings, exchange: WireExchange, signal: AbortSignal | undefined, onText?: (text: string) => void): Promise<LlmReply> {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  signal?.addEventListener("abort", abort, { once: true });
  const limitMs = settings.stream ? settings.idleTimeoutMs : settings.timeoutMs;
  let timedOut: string | null = null;
  let timer: NodeJS.Timeout | undefined;
  // Streaming: the clock restarts with every chunk, so a model that thinks aloud for minutes is not cut off.
  const restartClock = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = settings.stream ? `no bytes for ${limitMs} ms (llm.idle_timeout_ms)` : `no answer within ${limitMs} ms (llm.timeout_ms)`;
      controller.abort();
    }, limitMs);
  };
  restartClock();
  // An explicit llm.timeout_ms bounds a streamed attempt end to end: a reply that drips a byte a second ends too.
  const whole =
    settings.stream && settings.explicitTimeout
      ? setTimeout(() => {
          timedOut ??= `the streamed reply did not end within ${settings.timeoutMs} ms (llm.timeout_ms)`;
          controller.abort();
        }, settings.timeoutMs)
      : undefined;
  // The idle clock restarts with every byte; this one never does, so a trickle ends too.
  let overran: string | null = null;
  const stop = (reason: string): void => {
    overran ??= reason;
    controller.abort();
  };
  const total = settings.stream ? setTimeout(() => stop(`the streamed reply went on past ${settings.bounds.maxReplyMs} ms (llm.max_reply_ms)`), settings.bounds.maxReplyMs) : undefined;
  const bound = new ReplyBound(settings.bounds, stop);
  try {
    const reply = await sendHttp(settings.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: settings.stream ? "text/event-stream" : "application/json",
        "user-agent": "delta-engine",
        ...exchange.headers,
      },
      body: wireJson(exchange.body),
      signal: controller.signal,
      env: settings.env,
    });
    if (reply.status < 200 || reply.status > 299) {
      const text = (await collect(bound.count(reply.chunks()))).toString("utf8");
      throw new AttemptFailed(statusFailure(reply.status, headerGetter(reply), text, exchange.reading));
    }
    const body = await readBody(reply, exchange, bound, settings.stream ? restartClock : undefined, onText);
    const answer = exchange.toReply(body);
    if (answer.tool_calls.length > settings.bounds.maxToolCalls) {
      throw new AttemptFailed({ kind: "refused", reason: `the reply asked for ${answer.tool_calls.length} tool calls, more than llm.max_tool_calls (${settings.bounds.maxToolCalls}); no tool ran` });
    }
    return answer;
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    if (overran !== null) throw new AttemptFailed({ kind: "refused", reason: overran });
    if (timedOut !== null) throw new AttemptFailed({ kind: "transient", reason: timedOut });
    if (err instanceof AttemptFailed) throw err;
    throw new AttemptFailed(thrownFailure(err, exchange.reading));
  } finally {
    clearTimeout(timer);
    clearTimeout(whole);
    clearTimeout(total);
    signal?.removeEventListener("abort", abort);
  }
}

/**
 * The reply body, whichever way the server sent it: an event stream is assembled whether or not
 * one was asked for, and a JSON body is read whole even when a stream was.
 */
async function readBody(reply: HttpExchange, exchange: WireExchange, bound: ReplyBound, onChunk: (() => void) | undefined, onText: ((text: string) => void) | undefined): Promise<unknown> {
  if (isEventStream(reply)) {
    const assembler = exchange.assembler();
    const textOf = onText === undefined ? undefined : exchange.textDelta;
    for await (const event of sseEvents(tick(bound.count(reply.chunks()), onChunk))) {
      const checked = bound.nested(event);
      assembler.push(checked);
      const text = textOf?.(checked);
      if (text) onText!(text);
    }
    return assembler.result();
  }
  const text = (await collect(tick(bound.count(reply.chunks()), onChunk))).toString("utf8");
  if (looksLikeSse(text)) {
    const assembler = exchange.assembler();
    for (const event of parseSse(text)) assembler.push(bound.nested(event));
    return assembler.result();
  }
  return JSON.parse(bound.nestedText(text));
}

/** Counts a reply's bytes as they arrive and checks its JSON's nesting before it is parsed. */
class ReplyBound {
  private bytes = 0;
  constructor(
    private readonly bounds: ReplyBounds,
    private readonly stop: (reason: string) => void,
  ) {}

  async *count(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
    for await (const chunk of chunks) {
      this.bytes += chunk.length;
      if (this.bytes > this.bounds.maxReplyBytes) {
        const reason = `the reply grew past ${this.bounds.maxReplyBytes} bytes (llm.max_reply_bytes)`;
        this.stop(reason);
        throw new AttemptFailed({ kind: "refused", reason });
      }
      yield chunk;
    }
  }

  nested(event: SseEvent): SseEvent {
    this.nestedText(event.data);
    return event;
  }

  nestedText(text: string): string {
    if (nestsDeeperThan(text, this.bounds.maxReplyDepth)) {
      throw new AttemptFailed({ kind: "refused", reason: `the reply's JSON nests deeper than ${this.bounds.maxReplyDepth} levels (llm.max_reply_depth)` });
    }
    return text;
  }
}

async function* tick(chunks: AsyncIterable<Buffer>, onChunk: (() => void) | undefined): AsyncIterable<Buffer> {
  for await (const chunk of chunks) {
    onChunk?.();
    yield chunk;
  }
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

function isEventStream(reply: HttpExchange): boolean {
  return /^text\/event-stream\b/i.test(String(reply.headers["content-type"] ?? ""));
}

function headerGetter(reply: HttpExchange): { get(name: string): string | null } {
  return {
    get: (name) => {
      const value = reply.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}
