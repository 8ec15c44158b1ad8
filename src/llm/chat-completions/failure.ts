// Sorts a failed model request attempt into retryable or final, with a reason a person can act on.
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "openai";
import { retryAfterMs } from "../transport/backoff.js";
import { UnusableReplyError } from "./mapping.js";

export interface AttemptFailure {
  retryable: boolean;
  /** What went wrong, e.g. "HTTP 429" or "no answer within 5000 ms". */
  reason: string;
  /** The server's own error message, when it sent one. */
  serverMessage?: string;
  /** The wait the server asked for, when it asked. */
  retryAfterMs?: number;
}

const SERVER_MESSAGE_LIMIT = 500;

/** Statuses worth another try: request timeout, rate limit and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** Classifies what the SDK (or our reply mapping) threw; anything unrecognised is rethrown as a bug. */
export function classifyFailure(err: unknown, timedOut: boolean, timeoutMs: number): AttemptFailure {
  if (timedOut || err instanceof APIConnectionTimeoutError) return { retryable: true, reason: `no answer within ${timeoutMs} ms` };
  if (err instanceof APIConnectionError) return { retryable: true, reason: `connection failed (${connectionCause(err)})` };
  if (err instanceof APIError && typeof err.status === "number") {
    const serverMessage = serverMessageOf(err);
    const wait = retryAfterMs(err.headers);
    return {
      retryable: isRetryableStatus(err.status),
      reason: `HTTP ${err.status}`,
      ...(serverMessage ? { serverMessage } : {}),
      ...(wait !== null ? { retryAfterMs: wait } : {}),
    };
  }
  if (err instanceof SyntaxError) return { retryable: true, reason: "the server sent a body that is not valid JSON" };
  if (err instanceof UnusableReplyError) return { retryable: true, reason: err.message };
  throw err;
}

function connectionCause(err: APIConnectionError): string {
  const cause: unknown = err.cause;
  if (cause instanceof Error) {
    const inner: unknown = cause.cause;
    return inner instanceof Error ? `${cause.message}: ${inner.message}` : cause.message;
  }
  return err.message;
}

function serverMessageOf(err: APIError): string | undefined {
  const body: unknown = err.error;
  const fromBody = typeof body === "object" && body !== null && "message" in body && typeof body.message === "string" ? body.message : undefined;
  // Without a JSON error object the SDK's message is "<status> <body text>".
  const text = fromBody ?? err.message.replace(/^\d{3}\s+/, "").replace(/^status code \(no body\)$/, "");
  const trimmed = text.trim();
  if (!trimmed) return undefined;
  return trimmed.length > SERVER_MESSAGE_LIMIT ? `${trimmed.slice(0, SERVER_MESSAGE_LIMIT)}…` : trimmed;
}
