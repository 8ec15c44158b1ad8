// Sorts a failed model request attempt: retried, retried once, retried without the echoed extras, a limit or a quota the run waits for, or final, with the server's words and a hint that fits the cause.
import type { ContextOverflow } from "../errors.js";
import { contextOverflow } from "./context-overflow.js";
import { quotaOf } from "./quota.js";
import { ErrorBodyError, UnusableReplyError } from "./reply-errors.js";
import { serverWordsOfText, type ServerWords } from "./server-words.js";
import { serverWait } from "./transport/limit-wait.js";
import { TransportError } from "./transport/transport-error.js";

type FailureKind =
  /** Rate limit, server failure, network: retried with backoff up to llm.max_retries. */
  | "transient"
  /** A reply that could not be used (each one a billed generation): retried at most once. */
  | "unusable"
  /** The server refused a field an earlier reply gave us to send back: retried at once without them. */
  | "echo-refused"
  /** The request itself is wrong (key, model, size): not retried. */
  | "refused"
  /** The account is out of credit or over its spend limit: not retried; the run waits (DEFERRED QUOTA_EXHAUSTED). */
  | "quota";

export interface AttemptFailure {
  kind: FailureKind;
  /** What went wrong, e.g. "HTTP 429" or "no answer within 5000 ms". */
  reason: string;
  /** The server's own words, when it sent any. */
  words?: ServerWords;
  /** The HTTP status (or the status an error body carried). */
  status?: number;
  /** The wait the server asked for (Retry-After, or the reset of the limit that ran out), when it said. */
  retryAfterMs?: number;
  /** The header that wait came from: `retry-after`, `x-ratelimit-reset-tokens`, `anthropic-ratelimit-requests-reset`… */
  waitHeader?: string;
  /** A rate limit or an overload (429, 503, 529): a wait past llm.max_retry_wait_ms, or one outlasting the retries, defers the run. */
  limited?: boolean;
  /** With kind `quota`: when the provider says access returns (ISO-8601 UTC); null when it did not say. */
  accessReturns?: string | null;
  /** Set when the refusal says the conversation is longer than the model's window. */
  overflow?: ContextOverflow;
  /** Set when the provider's content filter refused the request (Azure's `content_filter`). */
  filtered?: boolean;
  /** Set when the server billed nothing for the attempt: it answered with an error status, or the request never reached it. */
  unbilled?: boolean;
}

/** Errors of a connection that was never made: the request cannot have reached the server. */
const NEVER_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Statuses worth another try: request timeout, rate limit and server-side failures. */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Statuses of a limit the run can wait out: rate limited, unavailable, overloaded (Anthropic's 529). */
const LIMIT_STATUSES = new Set([429, 503, 529]);

/** OpenAI's 429 for one request over a per-minute limit: "Request too large for gpt-5-nano … on tokens per min". Waiting cannot help it. */
const TOO_LARGE_FOR_LIMIT = /request too large/i;

/** What a wire protocol adds to the reading of a failure (filled from its WireProtocol). */
export interface ProtocolReading {
  /** The HTTP status each of the protocol's error codes stands for. */
  errorStatus: Readonly<Record<string, number>>;
  /** True when the server's words refuse something this request sent back from an earlier reply. */
  refusesEcho: (words: ServerWords) => boolean;
}

/**
 * A non-2xx reply, from its status, headers and body text. `X-Should-Retry` (Anthropic, OpenAI)
 * overrides the status: a 429 for a request larger than the per-minute limit says `false`, as
 * waiting cannot help.
 */
export function statusFailure(status: number, headers: { get(name: string): string | null }, body: string, reading: ProtocolReading): AttemptFailure {
  const words = serverWordsOfText(body);
  const wait = serverWait(headers);
  const base = { reason: `HTTP ${status}`, status, unbilled: true, ...(words ? { words } : {}), ...(wait !== null ? { retryAfterMs: wait.ms, waitHeader: wait.header } : {}) };
  // Before X-Should-Retry: Anthropic's credit 400 says false, and it is still worth waiting for.
  const quota = quotaOf(status, words);
  if (quota) return { kind: "quota", ...base, accessReturns: quota.accessReturns };
  if (status === 429 && words && TOO_LARGE_FOR_LIMIT.test(words.message)) return { kind: "refused", ...base };
  const shouldRetry = headers.get("x-should-retry")?.trim().toLowerCase();
  if (shouldRetry === "true" || (shouldRetry !== "false" && isRetryableStatus(status))) return { kind: "transient", ...base, ...(LIMIT_STATUSES.has(status) ? { limited: true } : {}) };
  return { kind: refusalKind(words, reading), ...base, ...overflowOf(status, words), ...(words?.code === "content_filter" ? { filtered: true } : {}) };
}

/**
 * What the transport, the JSON parser or the reply mapping threw, as a failure; anything else is a
 * bug and is rethrown. An error in place of a reply takes the status its code stands for in the
 * protocol's table, unless it carries one.
 */
export function thrownFailure(err: unknown, reading: ProtocolReading): AttemptFailure {
  if (err instanceof TransportError) {
    const code = (err.cause as NodeJS.ErrnoException | undefined)?.code;
    return { kind: "transient", reason: err.message, ...(code !== undefined && NEVER_CONNECTED.has(code) ? { unbilled: true } : {}) };
  }
  if (err instanceof SyntaxError) return { kind: "unusable", reason: "the server sent a body that is not valid JSON" };
  if (err instanceof UnusableReplyError) return { kind: "unusable", reason: err.message };
  if (err instanceof ErrorBodyError) {
    const words = withTableStatus(err.words, reading.errorStatus);
    const status = words.status;
    const base = { reason: status !== undefined ? `an error (${status}) in place of a reply` : "an error in place of a reply", words, ...(status !== undefined ? { status } : {}) };
    const quota = quotaOf(status, words);
    if (quota) return { kind: "quota", ...base, accessReturns: quota.accessReturns };
    if (status !== undefined && isRetryableStatus(status)) return { kind: "transient", ...base, ...(LIMIT_STATUSES.has(status) ? { limited: true } : {}) };
    const overflow = overflowOf(status ?? 400, words);
    if (overflow.overflow) return { kind: "refused", ...base, ...overflow };
    return { kind: status !== undefined && status >= 400 ? refusalKind(words, reading) : "unusable", ...base };
  }
  throw err;
}

function withTableStatus(words: ServerWords, errorStatus: Readonly<Record<string, number>>): ServerWords {
  const status = words.code === undefined || !Object.hasOwn(errorStatus, words.code) ? undefined : errorStatus[words.code];
  return status !== undefined && words.status === undefined ? { ...words, status } : words;
}

/** A model's malformed tool call is a bad generation, worth one more; a refusal of our echoed fields, worth one without them. */
function refusalKind(words: ServerWords | undefined, reading: ProtocolReading): FailureKind {
  if (words?.code === "tool_use_failed") return "unusable";
  if (words && reading.refusesEcho(words)) return "echo-refused";
  return "refused";
}

/**
 * True when the server names a field we sent back only because an earlier reply carried it
 * (Groq: "property 'reasoning' is unsupported"; DeepSeek's first reasoner: "remove the
 * reasoning_content") and does not say that field is missing.
 */
export function namesEchoedField(message: string, echoed: ReadonlySet<string>): boolean {
  if (/missing|required|must be (passed|sent|provided|included)/i.test(message)) return false;
  for (const field of echoed) {
    if (field !== "content" && new RegExp(`\\b${field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(message)) return true;
  }
  return false;
}

function overflowOf(status: number, words: ServerWords | undefined): { overflow?: ContextOverflow } {
  const overflow = contextOverflow(status, words);
  return overflow ? { overflow } : {};
}

/** How a failure reads in a message: "HTTP 400: \"the server's words\"". */
export function describeFailure(failure: AttemptFailure): string {
  const code = failure.words?.code && !failure.words.message.includes(failure.words.code) ? ` [${failure.words.code}]` : "";
  return failure.words ? `${failure.reason}: ${JSON.stringify(failure.words.message)}${code}` : failure.reason;
}

const STATUS_HINTS: Record<number, string> = {
  400: "The server rejected the request; check the llm settings in agent.yaml.",
  401: "Check DELTA_API_KEY.",
  403: "Check that this key may use this model.",
  404: "Check the model name in agent.yaml and DELTA_BASE_URL.",
  429: "The server said retrying cannot succeed (X-Should-Retry: false): the request is larger than the rate limit allows; keep fewer iterations in the context or raise the limit.",
  413: "The request is larger than this server accepts.",
  422: "The server rejected the request; check the llm settings in agent.yaml.",
};

/** The hint after a final failure: it names the cause the server gave, not a generic one. */
export function hintFor(failure: AttemptFailure): string | undefined {
  if (failure.words?.code === "tool_use_failed") {
    return "The model wrote a tool call the server could not accept (its output did not match the tool's schema); `delta continue` asks it again, or use a model that follows tool schemas better.";
  }
  if (failure.kind === "echo-refused") return "The server refused reasoning fields its own earlier reply carried, even when sent without them.";
  if (failure.status === 429 && failure.words && TOO_LARGE_FOR_LIMIT.test(failure.words.message)) {
    return "The request alone is larger than the rate limit allows per minute, so waiting cannot help: keep fewer iterations in the context or raise the limit.";
  }
  return failure.status !== undefined ? STATUS_HINTS[failure.status] : undefined;
}
