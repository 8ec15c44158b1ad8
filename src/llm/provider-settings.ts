// What every wire protocol's provider takes from agent.yaml and the environment: the endpoint, the key, timeouts, retries and backoff, checked before the run starts.
import { checkBaseUrl, endpointUrl } from "./base-url.js";
import { ConfigError } from "../errors.js";
import { DEFAULT_REPLY_BOUNDS, type AttemptSettings, type ReplyBounds } from "./attempt.js";
import { DEFAULT_BACKOFF, type BackoffPolicy } from "./transport/backoff.js";
import { proxyFor, type ProxyEnv } from "./transport/proxy-env.js";

export interface ProviderConfig {
  apiKey: string;
  /** The protocol's public endpoint when not given. */
  baseUrl?: string;
  /** llm.timeout_ms: each attempt end to end, headers and body, streamed or not. Unset: 120000 for a whole reply, none beyond the reply bounds for a stream. */
  timeoutMs?: number;
  /** Retries of rate limits, server failures and network errors after the first attempt. Default 3. */
  maxRetries?: number;
  /** The longest wait between attempts a call sleeps through (llm.max_retry_wait_ms); a limit asking for more defers the run. Default 60000. */
  maxRetryWaitMs?: number;
  /** First backoff step; else DELTA_RETRY_BASE_MS from the environment; else 500. */
  retryBaseMs?: number;
  /** Ask for a stream of events (llm.stream). */
  stream?: boolean;
  /** When streaming, the longest silence before the attempt is given up. Default 120000. */
  idleTimeoutMs?: number;
  /** Bounds on one reply: streamed duration, size, tool calls, JSON nesting (llm.max_reply_ms and the rest). */
  replyBounds?: Partial<ReplyBounds>;
}

/** A whole (not streamed) reply's attempt when llm.timeout_ms is not set. */
const DEFAULT_WHOLE_REPLY_TIMEOUT_MS = 120_000;

export interface ProviderSettings {
  attempt: AttemptSettings;
  apiKey: string;
  maxRetries: number;
  policy: BackoffPolicy;
  /** The base URL without credentials, query or fragment, safe to print. */
  endpoint: string;
}

/** The settings of a provider whose requests go to `toUrl(baseUrl)`; refuses (126) what cannot work. */
export function providerSettings(config: ProviderConfig, defaultBaseUrl: string, toUrl: (baseUrl: URL) => URL, env: NodeJS.ProcessEnv): ProviderSettings {
  const baseUrl = checkBaseUrl(config.baseUrl ?? defaultBaseUrl, "DELTA_BASE_URL or llm.base_url");
  const attempt: AttemptSettings = {
    url: toUrl(new URL(baseUrl)),
    stream: config.stream ?? false,
    timeoutMs: checkCount(config.timeoutMs ?? DEFAULT_WHOLE_REPLY_TIMEOUT_MS, "llm.timeout_ms", 1),
    explicitTimeout: config.timeoutMs !== undefined,
    idleTimeoutMs: checkCount(config.idleTimeoutMs ?? 120_000, "llm.idle_timeout_ms", 1),
    bounds: { ...DEFAULT_REPLY_BOUNDS, ...config.replyBounds },
    env: env as ProxyEnv,
  };
  // A proxy variable that cannot be used is refused now, before the run starts, not at its first model call.
  proxyFor(attempt.url, attempt.env);
  return {
    attempt,
    apiKey: config.apiKey,
    maxRetries: checkCount(config.maxRetries ?? 3, "llm.max_retries", 0),
    policy: {
      ...DEFAULT_BACKOFF,
      baseMs: config.retryBaseMs ?? retryBaseFromEnv(env) ?? DEFAULT_BACKOFF.baseMs,
      maxWaitMs: checkCount(config.maxRetryWaitMs ?? DEFAULT_BACKOFF.maxWaitMs, "llm.max_retry_wait_ms", 0),
    },
    endpoint: endpointUrl(baseUrl),
  };
}

/** `base` with `path` after its own path, keeping a query the base URL carries (Azure's api-version). */
export function urlUnder(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  return url;
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
