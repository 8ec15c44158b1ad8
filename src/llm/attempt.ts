// One model request and its reply, whole or streamed, under a whole-call or an idle timeout; each wire protocol says what to send and how to read the reply.
import type { LlmReply } from "../conversation.js";
import { statusFailure, thrownFailure, type AttemptFailure } from "./failure.js";
import { sendHttp, type HttpExchange } from "./transport/http-client.js";
import type { ProxyEnv } from "./transport/proxy-env.js";
import { looksLikeSse, parseSse, sseEvents, type SseEvent } from "./transport/sse.js";

export interface AttemptSettings {
  url: URL;
  /** Read the reply as server-sent events, with `idleTimeoutMs` instead of `timeoutMs`. */
  stream: boolean;
  timeoutMs: number;
  idleTimeoutMs: number;
  env: ProxyEnv;
}

/** Puts a protocol's event stream back together as the body a whole reply would have had. */
export interface StreamAssembler {
  push(event: SseEvent): void;
  result(): unknown;
}

/** What one protocol sends and how it reads the answer. */
export interface WireExchange {
  /** The protocol's own headers: its key, its version. */
  headers: Record<string, string>;
  body: unknown;
  /** A new assembler for this protocol's event stream. */
  assembler: () => StreamAssembler;
  /** The whole reply body as a reply; throws UnusableReplyError or ErrorBodyError when it is not one. */
  toReply: (body: unknown) => LlmReply;
  /** Fields this request sent back from earlier replies, to recognise a server refusing them (Chat Completions). */
  echoed?: ReadonlySet<string>;
  /** A protocol's own reading of a failure (Responses: a refusal of encrypted reasoning is one to retry without it). */
  reclassify?: ((failure: AttemptFailure) => AttemptFailure) | undefined;
  /** The reply text one event of the protocol's stream carries, if any. */
  textDelta?: (event: SseEvent) => string | undefined;
}

/** Carries a classified failure out of one attempt to the retry loop. */
export class AttemptFailed extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

/** Resolves with the reply, or rejects with AttemptFailed, or with the caller's abort reason once `signal` aborts. */
export async function attemptOnce(settings: AttemptSettings, exchange: WireExchange, signal: AbortSignal | undefined, onText?: (text: string) => void): Promise<LlmReply> {
  const reclassify = exchange.reclassify ?? ((failure: AttemptFailure) => failure);
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  signal?.addEventListener("abort", abort, { once: true });
  const limitMs = settings.stream ? settings.idleTimeoutMs : settings.timeoutMs;
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  // Streaming: the clock restarts with every chunk, so a model that thinks aloud for minutes is not cut off.
  const restartClock = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, limitMs);
  };
  restartClock();
  try {
    const reply = await sendHttp(settings.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: settings.stream ? "text/event-stream" : "application/json",
        "user-agent": "delta-engine",
        ...exchange.headers,
      },
      body: JSON.stringify(exchange.body),
      signal: controller.signal,
      env: settings.env,
    });
    if (reply.status < 200 || reply.status > 299) {
      const text = (await collect(reply.chunks())).toString("utf8");
      throw new AttemptFailed(reclassify(statusFailure(reply.status, headerGetter(reply), text, exchange.echoed)));
    }
    return exchange.toReply(await readBody(reply, exchange, settings.stream ? restartClock : undefined, onText));
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err;
    if (timedOut) {
      const reason = settings.stream ? `no bytes for ${limitMs} ms (llm.idle_timeout_ms)` : `no answer within ${limitMs} ms`;
      throw new AttemptFailed({ kind: "transient", reason });
    }
    if (err instanceof AttemptFailed) throw err;
    throw new AttemptFailed(reclassify(thrownFailure(err, exchange.echoed)));
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", abort);
  }
}

/**
 * The reply body, whichever way the server sent it: an event stream is assembled whether or not
 * one was asked for, and a JSON body is read whole even when a stream was.
 */
async function readBody(reply: HttpExchange, exchange: WireExchange, onChunk: (() => void) | undefined, onText: ((text: string) => void) | undefined): Promise<unknown> {
  if (isEventStream(reply)) {
    const assembler = exchange.assembler();
    const textOf = onText === undefined ? undefined : exchange.textDelta;
    for await (const event of sseEvents(tick(reply.chunks(), onChunk))) {
      assembler.push(event);
      const text = textOf?.(event);
      if (text) onText!(text);
    }
    return assembler.result();
  }
  const text = (await collect(tick(reply.chunks(), onChunk))).toString("utf8");
  if (looksLikeSse(text)) {
    const assembler = exchange.assembler();
    for (const event of parseSse(text)) assembler.push(event);
    return assembler.result();
  }
  return JSON.parse(text);
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
