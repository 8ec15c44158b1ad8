// One HTTP exchange over node:http/node:https, lighter than Node 20's global fetch: pooled keep-alive connections, proxies from the environment, any Content-Encoding undone.
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { coalescePieces } from "./coalesce.js";
import { openRequest } from "./connections.js";
import { ACCEPT_ENCODING, decodeChunks } from "./content-decoding.js";
import type { ProxyEnv } from "./proxy-env.js";
import { TransportError } from "./transport-error.js";

interface HttpRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** A string, or pieces sent one after another without being joined (their lengths give Content-Length). */
  body?: string | readonly Buffer[];
  /** Aborting destroys the connection; the exchange then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Where the proxy variables are read; the process environment by default. */
  env?: ProxyEnv;
}

export interface HttpExchange {
  status: number;
  headers: IncomingHttpHeaders;
  /** The proxy the request went through, for messages. */
  proxy: URL | null;
  /** The body as it arrives, decoded; throws TransportError when the connection is cut before the end. */
  chunks(): AsyncIterable<Buffer>;
}

/** Sends the request and resolves once the status and headers are in; the body is read through chunks(). */
export async function sendHttp(url: URL, request: HttpRequest): Promise<HttpExchange> {
  const signal = request.signal;
  if (signal?.aborted) throw abortReason(signal);
  const body = request.body;
  const length = Array.isArray(body) ? { "content-length": String(body.reduce((sum: number, piece: Buffer) => sum + piece.length, 0)) } : {};
  const headers = { "accept-encoding": ACCEPT_ENCODING, ...lowerCaseKeys(request.headers), ...length };
  const { req, proxy } = await openRequest(url, { method: request.method, headers }, request.env ?? process.env);
  return new Promise<HttpExchange>((resolve, reject) => {
    const onAbort = (): void => {
      req.destroy();
      reject(abortReason(signal));
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (cause) => {
      signal?.removeEventListener("abort", onAbort);
      reject(signal?.aborted ? abortReason(signal) : new TransportError(`connection failed (${cause.message})`, { cause }));
    });
    req.on("response", (res) => {
      const status = res.statusCode ?? 0;
      resolve({
        status,
        headers: res.headers,
        proxy,
        chunks: () => bodyChunks(res, signal, () => signal?.removeEventListener("abort", onAbort)),
      });
    });
    if (typeof body === "string" || body === undefined) {
      req.end(body);
      return;
    }
    req.cork();
    for (const piece of coalescePieces(body)) req.write(piece);
    req.uncork();
    req.end();
  });
}

function bodyChunks(res: IncomingMessage, signal: AbortSignal | undefined, done: () => void): AsyncIterable<Buffer> {
  async function* raw(): AsyncIterable<Buffer> {
    try {
      for await (const chunk of res) yield chunk as Buffer;
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      throw new TransportError(`connection reset while reading the reply (${err instanceof Error ? err.message : String(err)})`, { cause: err });
    }
    // A socket cut before Content-Length (or the last chunk) was reached ends the stream with `complete` still false.
    if (!res.complete) throw new TransportError("connection closed before the reply was complete");
  }
  async function* decoded(): AsyncIterable<Buffer> {
    try {
      yield* decodeChunks(raw(), headerValue(res.headers["content-encoding"]));
    } finally {
      done();
      // A reader that stops early (or fails) frees the socket rather than leaving it half read.
      if (!res.complete) res.destroy();
    }
  }
  return decoded();
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
}
