// One Chat Completions request and its reply, whole or streamed, under a whole-call or an idle timeout.
import type { LlmReply, LlmRequest } from "../../conversation.js";
import { sendHttp, type HttpExchange } from "../transport/http-client.js";
import type { ProxyEnv } from "../transport/proxy-env.js";
import { looksLikeSse, parseSse, sseEvents } from "../transport/sse.js";
import { toLlmReply } from "./completion-reply.js";
import { statusFailure, thrownFailure, type AttemptFailure } from "./failure.js";
import { echoedFields, toChatCompletionBody } from "./request-body.js";
import { StreamAssembly } from "./stream-assembly.js";

export interface AttemptSettings {
  url: URL;
  apiKey: string;
  /** Read the reply as server-sent events, with `idleTimeoutMs` instead of `timeoutMs`. */
  stream: boolean;
  timeoutMs: number;
  idleTimeoutMs: number;
  env: ProxyEnv;
}

/** Carries a classified failure out of one attempt to the retry loop. */
export class AttemptFailed extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

/** Resolves with the reply, or rejects with AttemptFailed, or with the caller's abort reason once `signal` aborts. */
export async function attemptOnce(settings: AttemptSettings, request: LlmRequest, options: { signal?: AbortSignal | undefined; withoutEcho: boolean }): Promise<LlmReply> {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  options.signal?.addEventListener("abort", abort, { once: true });
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
  const echoed = options.withoutEcho ? new Set<string>() : echoedFields(request);
  try {
    const exchange = await sendHttp(settings.url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${settings.apiKey}`,
        "content-type": "application/json",
        accept: settings.stream ? "text/event-stream" : "application/json",
        "user-agent": "delta-engine",
      },
      body: JSON.stringify(toChatCompletionBody(request, { stream: settings.stream, withoutEcho: options.withoutEcho })),
      signal: controller.signal,
      env: settings.env,
    });
    if (exchange.status < 200 || exchange.status > 299) {
      const text = (await collect(exchange.chunks())).toString("utf8");
      throw new AttemptFailed(statusFailure(exchange.status, headerGetter(exchange), text, echoed));
    }
    return toLlmReply(await readCompletion(exchange, settings.stream ? restartClock : undefined), request.model);
  } catch (err) {
    if (options.signal?.aborted) throw options.signal.reason ?? err;
    if (timedOut) {
      const reason = settings.stream ? `no bytes for ${limitMs} ms (llm.idle_timeout_ms)` : `no answer within ${limitMs} ms`;
      throw new AttemptFailed({ kind: "transient", reason });
    }
    if (err instanceof AttemptFailed) throw err;
    throw new AttemptFailed(thrownFailure(err, echoed));
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", abort);
  }
}

/**
 * The completion, whichever way the server sent it: an event stream is assembled whether or not
 * one was asked for, and a JSON body is read whole even when a stream was.
 */
async function readCompletion(exchange: HttpExchange, onChunk: (() => void) | undefined): Promise<unknown> {
  if (isEventStream(exchange)) {
    const assembly = new StreamAssembly();
    for await (const event of sseEvents(tick(exchange.chunks(), onChunk))) assembly.push(event.data);
    return assembly.completion();
  }
  const text = (await collect(tick(exchange.chunks(), onChunk))).toString("utf8");
  if (looksLikeSse(text)) {
    const assembly = new StreamAssembly();
    for (const event of parseSse(text)) assembly.push(event.data);
    return assembly.completion();
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

function isEventStream(exchange: HttpExchange): boolean {
  return /^text\/event-stream\b/i.test(String(exchange.headers["content-type"] ?? ""));
}

function headerGetter(exchange: HttpExchange): { get(name: string): string | null } {
  return {
    get: (name) => {
      const value = exchange.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}
