// A fetch-compatible function over node:http/node:https, lighter than Node 20's global fetch for a short CLI run.
import { request as httpRequest, type ClientRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { deferredCaAgent } from "./deferred-ca.js";
import { Headers, type HeadersInit } from "./web-globals.js";

/** Statuses whose Response must be built without a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * What the openai SDK reads from a fetch Response: status, headers and the body as text or JSON.
 * The body is buffered before the response is handed over, so there is no stream to cancel.
 */
export class FetchResponse {
  readonly ok: boolean;
  readonly redirected = false;
  readonly body = null;
  #bytes: Buffer | null;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly statusText: string,
    readonly headers: Headers,
    bytes: Buffer,
  ) {
    this.ok = status >= 200 && status <= 299;
    this.#bytes = bytes;
  }

  get bodyUsed(): boolean {
    return this.#bytes === null;
  }

  async text(): Promise<string> {
    return this.#take().toString("utf8");
  }

  /** Throws SyntaxError for a body that is not JSON, as Response.json() does. */
  async json(): Promise<unknown> {
    return JSON.parse(this.#take().toString("utf8"));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  #take(): Buffer {
    if (this.#bytes === null) throw new TypeError("Body is unusable: Body has already been read");
    const bytes = this.#bytes;
    this.#bytes = null;
    return bytes;
  }
}

export interface FetchInit {
  method?: string;
  headers?: HeadersInit | null;
  body?: unknown;
  signal?: AbortSignal | null;
}

/**
 * Sends one request and resolves with the whole body buffered, so a caller's timeout or abort
 * covers the body too. Uses the default agents (for HTTPS with deferred extra CA certificates,
 * an agent like the default one): Node keeps idle keep-alive sockets unref'd, so they never hold
 * the process open at exit.
 */
export async function httpFetch(input: string | URL | { url: string }, init: FetchInit = {}): Promise<FetchResponse> {
  const url = toUrl(input);
  const body = requestBody(init.body);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortReason(signal);
  const req = await openRequest(url, { method: init.method ?? "GET", headers: headerRecord(init.headers) });
  return new Promise<FetchResponse>((resolve, reject) => {
    if (signal?.aborted) {
      req.destroy();
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      req.destroy();
      reject(abortReason(signal));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = (): void => signal?.removeEventListener("abort", onAbort);

    req.on("error", (cause) => {
      settle();
      reject(new TypeError(`fetch failed: ${cause.message}`, { cause }));
    });
    req.on("response", (res) => {
      readBody(res).then(
        (buffer) => {
          settle();
          try {
            resolve(toResponse(url, res, buffer));
          } catch (err) {
            reject(err);
          }
        },
        (cause: Error) => {
          settle();
          reject(new TypeError(`fetch failed while reading the response: ${cause.message}`, { cause }));
        },
      );
    });
    req.end(body);
  });
}

/** node:https (with TLS and crypto behind it) and the agent for deferred CA certificates load with the first HTTPS request. */
async function openRequest(url: URL, options: RequestOptions): Promise<ClientRequest> {
  if (url.protocol !== "https:") return httpRequest(url, options);
  const [{ request }, agent] = await Promise.all([import("node:https"), deferredCaAgent()]);
  return request(url, { ...options, agent });
}

function toUrl(input: string | URL | { url: string }): URL {
  if (typeof input === "string") return new URL(input);
  if (input instanceof URL) return input;
  return new URL(input.url);
}

function requestBody(body: unknown): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  throw new TypeError("httpFetch sends only string or byte bodies");
}

function headerRecord(headers: HeadersInit | null | undefined): Record<string, string> {
  return Object.fromEntries(new Headers(headers).entries());
}

function readBody(res: IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (chunk: Buffer) => chunks.push(chunk));
    res.on("end", () => {
      // A socket cut before Content-Length was reached ends the stream with `complete` still false.
      if (res.complete) resolve(Buffer.concat(chunks));
      else reject(new Error("connection closed before the response was complete"));
    });
    res.on("error", reject);
    res.on("aborted", () => reject(new Error("connection reset while reading the response")));
  });
}

function toResponse(url: URL, res: IncomingMessage, buffer: Buffer): FetchResponse {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new TypeError(`fetch failed: unsupported HTTP status ${status}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new FetchResponse(url.href, status, res.statusMessage ?? "", headers, NULL_BODY_STATUSES.has(status) ? Buffer.alloc(0) : buffer);
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
}
