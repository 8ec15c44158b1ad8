// A fetch-compatible function over node:http/node:https, lighter than Node 20's global fetch for a short CLI run.
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

/** Statuses whose Response must be built without a body. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * Sends one request and resolves with the whole body buffered, so a caller's timeout or abort
 * covers the body too. Uses the default agents: Node keeps idle keep-alive sockets unref'd,
 * so they never hold the process open at exit.
 */
export function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const url = toUrl(input);
  const body = requestBody(init.body);
  const signal = init.signal ?? undefined;
  return new Promise<Response>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(url, { method: init.method ?? "GET", headers: headerRecord(init.headers) });
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
            resolve(toResponse(res, buffer));
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

function toUrl(input: string | URL | Request): URL {
  if (typeof input === "string") return new URL(input);
  if (input instanceof URL) return input;
  return new URL(input.url);
}

function requestBody(body: RequestInit["body"]): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  throw new TypeError("httpFetch sends only string or byte bodies");
}

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
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

function toResponse(res: IncomingMessage, buffer: Buffer): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) throw new TypeError(`fetch failed: unsupported HTTP status ${status}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  return new Response(NULL_BODY_STATUSES.has(status) ? null : new Uint8Array(buffer), { status, statusText: res.statusMessage ?? "", headers });
}

function abortReason(signal: AbortSignal | undefined): unknown {
  return signal?.reason ?? new DOMException("This operation was aborted", "AbortError");
}
