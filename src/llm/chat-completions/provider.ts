// The OpenAI-compatible Chat Completions provider: whole or streamed replies over our own HTTP client, and an observable retry loop.
import { ConfigError, ContextOverflowError, LlmError, ModelRefusedError } from "../../errors.js";
import { DEFAULT_BACKOFF, backoffDelayMs, sleep, type BackoffPolicy } from "../transport/backoff.js";
import { proxyFor, type ProxyEnv } from "../transport/proxy-env.js";
import { AttemptFailed, attemptOnce, type AttemptSettings } from "./attempt.js";
import { describeFailure, hintFor, type AttemptFailure } from "./failure.js";
import type { CallOptions, Provider } from "../types.js";
import type { LlmReply, LlmRequest } from "../../conversation.js";

export interface OpenAiProviderConfig {
  apiKey: string;
  /** Defaults to https://api.openai.com/v1. */
  baseUrl?: string;
  /** Per attempt, headers and body together, when not streaming. Default 120000. */
  timeoutMs?: number;
  /** Retries of rate limits, server failures and network errors after the first attempt. Default 3. */
  maxRetries?: number;
  /** First backoff step; else DELTA_RETRY_BASE_MS from the environment; else 500. */
  retryBaseMs?: number;
  /** Ask for a stream of events (llm.stream). */
  stream?: boolean;
  /** When streaming, the longest silence before the attempt is given up. Default 120000. */
  idleTimeoutMs?: number;
}

export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** A reply that cannot be used cost a generation: it is asked for again once, never more. */
const UNUSABLE_RETRIES = 1;

export function createOpenAiProvider(config: OpenAiProviderConfig, env: NodeJS.ProcessEnv = process.env): Provider {
  const baseUrl = checkBaseUrl(config.baseUrl ?? DEFAULT_BASE_URL);
  const settings: AttemptSettings = {
    url: completionsUrl(baseUrl),
    apiKey: config.apiKey,
    stream: config.stream ?? false,
    timeoutMs: checkCount(config.timeoutMs ?? 120_000, "llm.timeout_ms", 1),
    idleTimeoutMs: checkCount(config.idleTimeoutMs ?? 120_000, "llm.idle_timeout_ms", 1),
    env: env as ProxyEnv,
  };
  // A proxy variable that cannot be used is refused now, before the run starts, not at its first model call.
  proxyFor(settings.url, settings.env);
  const maxRetries = checkCount(config.maxRetries ?? 3, "llm.max_retries", 0);
  const policy: BackoffPolicy = { ...DEFAULT_BACKOFF, baseMs: config.retryBaseMs ?? retryBaseFromEnv(env) ?? DEFAULT_BACKOFF.baseMs };
  const endpoint = describeEndpoint(baseUrl);
  // Once this server refused the extras its replies carry, later calls of this process leave them out from the start.
  let withoutEcho = false;

  return {
    name: "openai-compatible",
    async complete(request: LlmRequest, options: CallOptions = {}): Promise<LlmReply> {
      let retries = 0;
      let unusable = 0;
      for (let attempt = 1; ; attempt += 1) {
        if (options.signal?.aborted) throw aborted(endpoint);
        let failure: AttemptFailure;
        try {
          return await attemptOnce(settings, request, { signal: options.signal, withoutEcho });
        } catch (err) {
          if (options.signal?.aborted) throw aborted(endpoint);
          if (!(err instanceof AttemptFailed)) throw err;
          failure = err.failure;
        }
        if (failure.kind === "echo-refused" && !withoutEcho) {
          withoutEcho = true;
          options.onRetry?.({ attempt, delayMs: 0, reason: `${describeFailure(failure)}; sending again without the reasoning fields of earlier replies` });
          continue;
        }
        if (failure.overflow) throw new ContextOverflowError(overflowMessage(endpoint, failure), failure.overflow);
        if (failure.filtered) throw new ModelRefusedError(`The provider's content filter refused the request to ${endpoint} (${describeFailure(failure)}); rephrase the task and continue the run with -m.`);
        if (failure.kind === "refused" || failure.kind === "echo-refused") throw new LlmError(refusedMessage(endpoint, failure));
        const budget = failure.kind === "unusable" ? Math.min(UNUSABLE_RETRIES, maxRetries) - unusable : maxRetries - retries;
        if (budget <= 0) throw new LlmError(exhaustedMessage(endpoint, failure, attempt));
        if (failure.kind === "unusable") unusable += 1;
        else retries += 1;
        const delayMs = failure.retryAfterMs !== undefined ? Math.min(failure.retryAfterMs, policy.retryAfterCapMs) : backoffDelayMs(retries + unusable, policy);
        options.onRetry?.({ attempt, delayMs, reason: describeFailure(failure) });
        await sleep(delayMs, options.signal).catch(() => {
          throw aborted(endpoint);
        });
      }
    },
  };
}

function aborted(endpoint: string): LlmError {
  return new LlmError(`The model request to ${endpoint} was aborted.`);
}

function refusedMessage(endpoint: string, failure: AttemptFailure): string {
  const hint = hintFor(failure);
  return `The model endpoint ${endpoint} refused the request (${describeFailure(failure)}); not retried.${hint ? ` ${hint}` : ""}`;
}

function exhaustedMessage(endpoint: string, failure: AttemptFailure, attempts: number): string {
  const hint = hintFor(failure);
  return `The model endpoint ${endpoint} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${describeFailure(failure)}.${hint ? ` ${hint}` : ""}`;
}

function overflowMessage(endpoint: string, failure: AttemptFailure): string {
  const { limitTokens, requestedTokens } = failure.overflow ?? {};
  const sizes = limitTokens !== undefined || requestedTokens !== undefined ? ` (${requestedTokens ?? "?"} tokens asked of a ${limitTokens ?? "?"}-token window)` : "";
  return (
    `The conversation is longer than the model's context window${sizes}: ${endpoint} said ${describeFailure(failure)}. ` +
    "Keep fewer iterations in the context (journal max_iterations in context.yaml), print less from tools, or use a model with a larger window; then `delta continue`."
  );
}

/** The base URL without credentials, query or fragment, safe to print. */
export function describeEndpoint(baseUrl: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, "");
}

/** `<base>/chat/completions`, keeping a query the base URL carries (Azure's api-version). */
function completionsUrl(baseUrl: string): URL {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url;
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
