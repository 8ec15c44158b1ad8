// What a model server said when it refused or failed, read from any error body shape real servers send, bounded.
import { isRecord } from "./is-record.js";

export interface ServerWords {
  /** The server's own message, as it wrote it (bounded). */
  message: string;
  /** Its error code, when it gave one: `context_length_exceeded`, `tool_use_failed`, `RESOURCE_EXHAUSTED`… */
  code?: string;
  /** A status the body itself carries (OpenRouter's `error.code: 429` on a 200), when it is a number. */
  status?: number;
  /** A finer code beside it: Anthropic's `error.details.error_code` (`enforced_spend_limit_reached` inside a `rate_limit_error`). */
  detail?: string;
}

export const SERVER_MESSAGE_LIMIT = 500;

/**
 * The words of an error body: `{"error":{"message"}}` (OpenAI and most), with OpenRouter's
 * `error.metadata.raw` (the upstream provider's own words); `{"error":"text"}` (TGI, gateways);
 * `{"object":"error","message"}` (vLLM); `[{"error":{…}}]` (Gemini); `{"detail"}` (FastAPI
 * servers); `{"errors":[{"message"}]}`; Anthropic's `{"type":"error","error":{"type","message"}}`, its type
 * the code. Undefined when the value holds no error.
 */
export function serverWords(body: unknown): ServerWords | undefined {
  if (Array.isArray(body)) return body.length > 0 ? serverWords(body[0]) : undefined;
  if (!isRecord(body)) return undefined;
  const error = body.error;
  if (typeof error === "string" && error.trim() !== "") return words(error, codeOf(body.error_type));
  if (isRecord(error)) {
    const message = textOf(error.message) ?? textOf(error.msg) ?? JSON.stringify(error);
    const metadata = isRecord(error.metadata) ? error.metadata : undefined;
    const raw = metadata ? textOf(metadata.raw) : undefined;
    const upstream = raw ? ` (${typeof metadata?.provider_name === "string" ? `${metadata.provider_name}: ` : ""}${raw})` : "";
    const status = typeof error.code === "number" ? error.code : typeof error.status_code === "number" ? error.status_code : undefined;
    // Anthropic names its errors only by type (`overloaded_error`), inside a body whose own type is "error".
    const code = typeof error.code === "string" ? error.code : (error.status ?? (body.type === "error" ? error.type : undefined));
    const detail = isRecord(error.details) ? codeOf(error.details.error_code) : undefined;
    return { ...words(`${message}${upstream}`, codeOf(code), status), ...(detail ? { detail } : {}) };
  }
  if (body.object === "error" || body.type === "error") {
    const message = textOf(body.message);
    if (message) return words(message, codeOf(body.code));
  }
  if (typeof body.detail === "string") return words(body.detail);
  if (Array.isArray(body.detail) && isRecord(body.detail[0]) && typeof body.detail[0].msg === "string") return words(body.detail[0].msg);
  if (Array.isArray(body.errors) && isRecord(body.errors[0])) {
    const message = textOf(body.errors[0].message);
    if (message) return words(message);
  }
  return undefined;
}

/** The words of a body that may not be JSON at all (an HTML page from a proxy, plain text): parsed when it is JSON, else the text. */
export function serverWordsOfText(text: string): ServerWords | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    const found = serverWords(parsed);
    if (found) return found;
  } catch {
    // Not JSON: the text is the message.
  }
  return words(trimmed.replace(/\s+/g, " "));
}

function words(message: string, code?: string, status?: number): ServerWords {
  const trimmed = message.trim();
  return {
    message: trimmed.length > SERVER_MESSAGE_LIMIT ? `${trimmed.slice(0, SERVER_MESSAGE_LIMIT)}…` : trimmed,
    ...(code ? { code } : {}),
    ...(status !== undefined ? { status } : {}),
  };
}

function textOf(value: unknown): string | undefined {
  if (typeof value === "string") return value.trim() === "" ? undefined : value;
  if (value === undefined || value === null) return undefined;
  return JSON.stringify(value);
}

function codeOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
