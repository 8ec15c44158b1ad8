// The OpenAI-compatible Chat Completions provider: one non-streaming call, our own observable retry loop.
import OpenAI from "openai";
import { ConfigError, LlmError } from "../../errors.js";
import { DEFAULT_BACKOFF, backoffDelayMs, sleep, type BackoffPolicy } from "../transport/backoff.js";
import { httpFetch } from "../transport/http-fetch.js";
import { classifyFailure, type AttemptFailure } from "./failure.js";
import { toChatCompletionBody, toLlmReply } from "./mapping.js";
import type { CallOptions, Provider } from "../types.js";
import type { LlmReply, LlmRequest } from "../../conversation.js";

export interface OpenAiProviderConfig {
  apiKey: string;
  /** Defaults to https://api.openai.com/v1. */
  baseUrl?: string;
  /** Per attempt, headers and body together. Default 120000. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 3. */
  maxRetries?: number;
  /** First backoff step; else DELTA_RETRY_BASE_MS from the environment; else 500. */
  retryBaseMs?: number;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

const STATUS_HINTS: Record<number, string> = {
  400: "The server rejected the request; check the llm settings in agent.yaml.",
  401: "Check DELTA_API_KEY.",
  403: "Check that this key may use this model.",
  404: "Check the model name in agent.yaml and DELTA_BASE_URL.",
  422: "The server rejected the request; check the llm settings in agent.yaml.",
};

export function createOpenAiProvider(config: OpenAiProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const baseUrl = checkBaseUrl(config.baseUrl ?? DEFAULT_BASE_URL);
  const timeoutMs = checkCount(config.timeoutMs ?? 120_000, "llm.timeout_ms", 1);
  const maxRetries = checkCount(config.maxRetries ?? 3, "llm.max_retries", 0);
  const policy: BackoffPolicy = { ...DEFAULT_BACKOFF, baseMs: config.retryBaseMs ?? retryBaseFromEnv(env) ?? DEFAULT_BACKOFF.baseMs };
  const endpoint = describeEndpoint(baseUrl);
  // Organization and project are pinned so the SDK reads nothing from the environment behind our back.
  // httpFetch answers with the part of a Response the SDK reads (FetchResponse), hence the cast.
  const fetch = httpFetch as unknown as typeof globalThis.fetch;
  const client = new OpenAI({ apiKey: config.apiKey, baseURL: baseUrl, organization: null, project: null, maxRetries: 0, timeout: timeoutMs, fetch });

  async function attemptOnce(request: LlmRequest, signal: AbortSignal | undefined): Promise<LlmReply> {
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    signal?.addEventListener("abort", abort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      const completion: unknown = await client.chat.completions.create(toChatCompletionBody(request), { signal: controller.signal });
      return toLlmReply(completion, request.model);
    } catch (err) {
      if (signal?.aborted) throw aborted(endpoint);
      throw new AttemptFailed(classifyFailure(err, timedOut, timeoutMs));
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abort);
    }
  }

  return {
    name: "openai-compatible",
    async complete(request: LlmRequest, options: CallOptions = {}): Promise<LlmReply> {
      for (let attempt = 1; ; attempt += 1) {
        if (options.signal?.aborted) throw aborted(endpoint);
        let failure: AttemptFailure;
        try {
          return await attemptOnce(request, options.signal);
        } catch (err) {
          if (!(err instanceof AttemptFailed)) throw err;
          failure = err.failure;
        }
        if (!failure.retryable) throw new LlmError(refusedMessage(endpoint, failure));
        if (attempt > maxRetries) throw new LlmError(exhaustedMessage(endpoint, failure, attempt));
        const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, policy.retryAfterCapMs) : backoffDelayMs(attempt, policy);
        options.onRetry?.({ attempt, delayMs, reason: describeFailure(failure) });
        await sleep(delayMs, options.signal).catch(() => {
          throw aborted(endpoint);
        });
      }
    },
  };
}

/** Carries a classified failure out of one attempt to the retry loop. */
class AttemptFailed extends Error {
  constructor(readonly failure: AttemptFailure) {
    super(failure.reason);
  }
}

function aborted(endpoint: string): LlmError {
  return new LlmError(`The model request to ${endpoint} was aborted.`);
}

function describeFailure(failure: AttemptFailure): string {
  return failure.serverMessage ? `${failure.reason}: ${JSON.stringify(failure.serverMessage)}` : failure.reason;
}

function refusedMessage(endpoint: string, failure: AttemptFailure): string {
  const status = Number(/^HTTP (\d+)/.exec(failure.reason)?.[1]);
  const hint = STATUS_HINTS[status];
  return `The model endpoint ${endpoint} refused the request (${describeFailure(failure)}); not retried.${hint ? ` ${hint}` : ""}`;
}

function exhaustedMessage(endpoint: string, failure: AttemptFailure, attempts: number): string {
  return `The model endpoint ${endpoint} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${describeFailure(failure)}.`;
}

/** The base URL without credentials, query or fragment, safe to print. */
export function describeEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

function checkBaseUrl(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`The model base URL ${JSON.stringify(baseUrl)} (DELTA_BASE_URL or llm.base_url) is not a URL; use e.g. http://localhost:11434/v1.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`The model base URL ${JSON.stringify(describeEndpoint(baseUrl))} must start with http:// or https://.`);
  }
  return baseUrl;
}

function checkCount(value: number, field: string, min: number): number {
  if (!Number.isInteger(value) || value < min) throw new ConfigError(`${field} must be a whole number ≥ ${min}, got ${value}.`);
  return value;
}

function retryBaseFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.DELTA_RETRY_BASE_MS;
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) {
    throw new ConfigError(`DELTA_RETRY_BASE_MS must be a number of milliseconds ≥ 0, got ${JSON.stringify(raw)}.`);
  }
  return value;
}
