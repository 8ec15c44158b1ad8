// One exchange with a provider's batch endpoints: bounded in time and size, the reply's JSON read or refused with the server's words, never trusted beyond its bounds.
import type { z } from "zod";
import { keepClassNames, LlmError } from "../../errors.js";
import { redactText } from "../../secrets.js";
import { serverWordsOfText } from "../server-words.js";
import { sendHttp } from "../transport/http-client.js";
import type { ProxyEnv } from "../transport/proxy-env.js";

/** Where a batch API lives and who asks: the base URL and the protocol's headers (its key). */
export interface BatchEndpoint {
  baseUrl: string;
  headers: Record<string, string>;
  /** Where the proxy variables are read. */
  env?: ProxyEnv;
}

/** The longest a batch endpoint may take to answer one exchange, body included. */
const EXCHANGE_TIMEOUT_MS = 300_000;
/** A JSON reply (a batch, a page of batches, a file object): far more than any real one. */
export const JSON_REPLY_LIMIT = 8 << 20;

interface BatchReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** `path` under the endpoint's base URL (its own path kept), with `query`. */
export function batchUrl(endpoint: BatchEndpoint, path: string, query: Record<string, string> = {}): URL {
  const url = new URL(endpoint.baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}${path}`;
  url.search = new URLSearchParams(query).toString();
  url.hash = "";
  return url;
}

/** Sends one request and reads the whole reply, at most `limit` bytes; a reply over it, a cut connection or a timeout is an LlmError naming the URL. */
export async function exchange(endpoint: BatchEndpoint, method: "GET" | "POST", url: URL, body: readonly Buffer[] | undefined, extraHeaders: Record<string, string>, limit: number, signal?: AbortSignal): Promise<BatchReply> {
  const timeout = AbortSignal.timeout(EXCHANGE_TIMEOUT_MS);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const shown = `${method} ${url.origin}${url.pathname}`;
  try {
    const reply = await sendHttp(url, { method, headers: { "user-agent": "delta-engine", ...endpoint.headers, ...extraHeaders }, ...(body ? { body } : {}), signal: combined, ...(endpoint.env ? { env: endpoint.env } : {}) });
    const pieces: Buffer[] = [];
    let size = 0;
    for await (const chunk of reply.chunks()) {
      size += chunk.length;
      if (size > limit) throw new LlmError(`${shown}: the reply is larger than ${limit} bytes, more than a batch API sends; refused unread.`);
      pieces.push(chunk);
    }
    return { status: reply.status, headers: reply.headers, body: Buffer.concat(pieces) };
  } catch (err) {
    if (err instanceof LlmError) throw err;
    if (signal?.aborted) throw signal.reason ?? err;
    const why = timeout.aborted ? `no whole reply within ${EXCHANGE_TIMEOUT_MS} ms` : err instanceof Error ? err.message : String(err);
    throw new LlmError(`${shown}: ${why}`);
  }
}

/** The reply's JSON object when its status is 2xx; else an LlmError with the status and the server's own words (bounded, the key removed). */
export function jsonOf(reply: BatchReply, what: string, secrets: readonly string[]): Record<string, unknown> {
  const text = reply.body.toString("utf8");
  if (reply.status < 200 || reply.status > 299) {
    const words = serverWordsOfText(text);
    const said = words?.message ?? text.slice(0, 300);
    throw new BatchHttpError(`${what}: HTTP ${reply.status}${said ? `: ${redactText(said, secrets)}` : ""}`, reply.status);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new LlmError(`${what}: the reply is not JSON (${JSON.stringify(redactText(text.slice(0, 120), secrets))}…)`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new LlmError(`${what}: the reply is not a JSON object`);
  return parsed as Record<string, unknown>;
}

/** A batch endpoint answered with an error status: `status` tells a refusal (4xx, nothing made) from a failure whose effect is unknown. */
export class BatchHttpError extends LlmError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

keepClassNames({ BatchHttpError });

/**
 * Streams a JSONL download line by line to `onLine` (each line at most `lineLimit` bytes, the whole at most `limit`):
 * a results file of 50,000 replies is never held whole. A status other than 2xx is a BatchHttpError with the server's words.
 */
export async function exchangeLines(endpoint: BatchEndpoint, url: URL, what: string, secrets: readonly string[], limits: { line: number; total: number }, onLine: (line: string, number: number) => void, signal?: AbortSignal): Promise<void> {
  const shown = `GET ${url.origin}${url.pathname}`;
  try {
    const reply = await sendHttp(url, { method: "GET", headers: { "user-agent": "delta-engine", accept: "application/binary", ...endpoint.headers }, ...(signal ? { signal } : {}), ...(endpoint.env ? { env: endpoint.env } : {}) });
    if (reply.status < 200 || reply.status > 299) {
      const pieces: Buffer[] = [];
      let size = 0;
      for await (const chunk of reply.chunks()) {
        size += chunk.length;
        if (size <= JSON_REPLY_LIMIT) pieces.push(chunk);
      }
      jsonOf({ status: reply.status, headers: reply.headers, body: Buffer.concat(pieces) }, what, secrets);
      return;
    }
    let total = 0;
    let number = 0;
    let held: Buffer[] = [];
    let heldBytes = 0;
    for await (const chunk of reply.chunks()) {
      total += chunk.length;
      if (total > limits.total) throw new LlmError(`${what}: the download is larger than ${limits.total} bytes; refused.`);
      let start = 0;
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
        held.push(chunk.subarray(start, end));
        number += 1;
        const bytes = Buffer.concat(held);
        if (bytes.length > limits.line) throw new LlmError(`${what}: line ${number} is longer than ${limits.line} bytes; refused.`);
        const line = bytes.toString("utf8");
        held = [];
        heldBytes = 0;
        if (line.trim() !== "") onLine(line, number);
        start = end + 1;
      }
      if (start < chunk.length) {
        heldBytes += chunk.length - start;
        if (heldBytes > limits.line) throw new LlmError(`${what}: line ${number + 1} is longer than ${limits.line} bytes; refused.`);
        held.push(chunk.subarray(start));
      }
    }
    const last = Buffer.concat(held).toString("utf8");
    if (last.trim() !== "") onLine(last, number + 1);
  } catch (err) {
    if (err instanceof LlmError) throw err;
    if (signal?.aborted) throw signal.reason ?? err;
    throw new LlmError(`${shown}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** One line of a results download read as `schema` says, or an error naming the line and what is wrong with it. */
export function resultLine<T>(schema: z.ZodType<T>, text: string, number: number, what: string): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LlmError(`${what}: line ${number} is not JSON`);
  }
  const line = schema.safeParse(json);
  if (!line.success) throw new LlmError(`${what}: line ${number} is not a batch result (${line.error.issues[0]?.path.join(".")}: ${line.error.issues[0]?.message})`);
  return line.data;
}
