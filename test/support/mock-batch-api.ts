// A batch API on 127.0.0.1 that follows the providers' documented shapes field for field: OpenAI's Batch API (files uploaded as multipart, batches with metadata, list pages newest first, output files) and Anthropic's Message Batches (inline requests, processing_status, JSONL results, 404 before the end). The test ends each batch with the replies it chooses.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a batch holds, as the provider received it. */
export interface BatchRequestLine {
  custom_id: string;
  body: Record<string, unknown>;
}

/** How one request of an ended batch is answered: a reply body (HTTP 200), an HTTP error, or (OpenAI) a non-HTTP error. */
export type BatchOutcome = { body: unknown } | { status: number; body: unknown } | { error: { code: string; message: string } } | { type: "expired" | "canceled" };

export interface MockBatch {
  id: string;
  api: "openai" | "anthropic";
  lines: BatchRequestLine[];
  metadata: Record<string, string> | null;
  endpoint: string | null;
  createdAt: number;
  status: string;
  outcomes: Map<string, BatchOutcome> | null;
}

export interface MockBatchApi {
  /** The base URL a run's DELTA_BASE_URL takes: `<origin>/v1` for OpenAI, the origin for Anthropic. */
  baseUrl: string;
  batches: MockBatch[];
  /** Every request received: method, path and query. */
  log: string[];
  /** Ends the batch: each request answered by `answer`, its results ready. */
  end(batchId: string, answer: (line: BatchRequestLine) => BatchOutcome): void;
  close(): Promise<void>;
}

const KEY = "sk-test-secret-key-123";
const OPENAI_ENDPOINTS = new Set(["/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions", "/v1/moderations"]);

export async function startMockBatchApi(api: "openai" | "anthropic"): Promise<MockBatchApi> {
  const batches: MockBatch[] = [];
  const files = new Map<string, Buffer>();
  const log: string[] = [];
  let counter = 0;
  const nextId = (prefix: string): string => `${prefix}${(++counter).toString(16).padStart(8, "0")}${"0".repeat(24)}`;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      log.push(`${req.method} ${req.url}`);
      try {
        (api === "openai" ? openai : anthropic)(req, res, Buffer.concat(chunks));
      } catch (err) {
        send(res, 500, { error: { message: String(err) } });
      }
    });
  });

  function openai(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    if (req.headers.authorization !== `Bearer ${KEY}`) return send(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } });
    const url = new URL(req.url!, "http://x");
    const path = url.pathname;
    if (req.method === "POST" && path === "/v1/files") {
      const parts = multipart(req.headers["content-type"] ?? "", body);
      if (parts.get("purpose")?.toString() !== "batch") return send(res, 400, { error: { message: "purpose must be batch", type: "invalid_request_error" } });
      const file = parts.get("file");
      if (!file) return send(res, 400, { error: { message: "file is required", type: "invalid_request_error" } });
      if (file.length > 200 * 1000 * 1000) return send(res, 400, { error: { message: "file too large", type: "invalid_request_error" } });
      const id = `file-${nextId("")}`;
      files.set(id, file);
      const now = Math.floor(Date.now() / 1000);
      return send(res, 200, { object: "file", id, purpose: "batch", filename: "input.jsonl", bytes: file.length, created_at: now, expires_at: now + 2592000, status: "processed", status_details: null });
    }
    if (req.method === "POST" && path === "/v1/batches") {
      const create = JSON.parse(body.toString()) as { input_file_id?: string; endpoint?: string; completion_window?: string; metadata?: Record<string, string> | null };
      const input = create.input_file_id ? files.get(create.input_file_id) : undefined;
      if (!input) return send(res, 400, { error: { message: `No such File object: ${create.input_file_id}`, type: "invalid_request_error" } });
      if (create.completion_window !== "24h" || !OPENAI_ENDPOINTS.has(create.endpoint ?? "")) return send(res, 400, { error: { message: "invalid endpoint or completion_window", type: "invalid_request_error" } });
      const metadata = create.metadata ?? null;
      if (metadata && (Object.keys(metadata).length > 16 || Object.entries(metadata).some(([key, value]) => key.length > 64 || typeof value !== "string" || value.length > 512))) {
        return send(res, 400, { error: { message: "invalid metadata", type: "invalid_request_error" } });
      }
      const lines = input.toString().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { custom_id: string; method: string; url: string; body: Record<string, unknown> });
      const ids = new Set(lines.map((line) => line.custom_id));
      if (ids.size !== lines.length || lines.length > 50_000 || lines.some((line) => line.method !== "POST" || line.url !== create.endpoint || typeof line.custom_id !== "string")) {
        return send(res, 400, { error: { message: "invalid input file", type: "invalid_request_error" } });
      }
      const batch: MockBatch = { id: `batch_${nextId("")}`, api: "openai", lines: lines.map(({ custom_id, body: lineBody }) => ({ custom_id, body: lineBody })), metadata, endpoint: create.endpoint!, createdAt: Math.floor(Date.now() / 1000), status: "validating", outcomes: null };
      batches.push(batch);
      (batch as MockBatch & { inputFileId: string }).inputFileId = create.input_file_id!;
      return send(res, 200, openaiBatch(batch));
    }
    if (req.method === "GET" && path === "/v1/batches") {
      const limit = Math.min(100, Number(url.searchParams.get("limit") ?? 20));
      const newestFirst = [...batches].reverse();
      const after = url.searchParams.get("after");
      const start = after ? newestFirst.findIndex((batch) => batch.id === after) + 1 : 0;
      const page = newestFirst.slice(start, start + limit);
      return send(res, 200, { object: "list", data: page.map(openaiBatch), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: start + limit < newestFirst.length });
    }
    const match = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    if (match) {
      const batch = batches.find((candidate) => candidate.id === decodeURIComponent(match[1]!));
      if (!batch) return send(res, 404, { error: { message: `No batch found with id '${match[1]}'.`, type: "invalid_request_error" } });
      if (match[2] && req.method === "POST") {
        if (batch.outcomes === null) batch.status = "cancelling";
        return send(res, 200, openaiBatch(batch));
      }
      // Validation ends by the first poll.
      if (batch.status === "validating") batch.status = "in_progress";
      return send(res, 200, openaiBatch(batch));
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (req.method === "GET" && content) {
      const file = files.get(decodeURIComponent(content[1]!));
      if (!file) return send(res, 404, { error: { message: "No such File object", type: "invalid_request_error" } });
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": file.length });
      res.end(file);
      return;
    }
    send(res, 404, { error: { message: `Invalid URL (${req.method} ${path})`, type: "invalid_request_error" } });
  }

  function openaiBatch(batch: MockBatch): Record<string, unknown> {
    const outcomes = batch.outcomes;
    const failed = outcomes ? [...outcomes.values()].filter((outcome) => !("body" in outcome) || "status" in outcome).length : 0;
    const extra = batch as MockBatch & { inputFileId: string; outputFileId?: string; errorFileId?: string };
    return {
      id: batch.id,
      object: "batch",
      endpoint: batch.endpoint,
      model: batch.status === "validating" ? null : "gpt-5-nano-2025-08-07",
      errors: null,
      input_file_id: extra.inputFileId,
      completion_window: "24h",
      status: batch.status,
      output_file_id: extra.outputFileId ?? null,
      error_file_id: extra.errorFileId ?? null,
      created_at: batch.createdAt,
      in_progress_at: batch.status === "validating" ? null : batch.createdAt,
      expires_at: batch.createdAt + 86400,
      finalizing_at: null,
      completed_at: batch.status === "completed" ? Math.floor(Date.now() / 1000) : null,
      failed_at: null,
      expired_at: null,
      cancelling_at: batch.status === "cancelling" ? Math.floor(Date.now() / 1000) : null,
      cancelled_at: null,
      request_counts: { total: batch.lines.length, completed: outcomes ? batch.lines.length - failed : 0, failed },
      usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
      metadata: batch.metadata,
    };
  }

  function anthropic(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
    if (req.headers["x-api-key"] !== KEY) return send(res, 401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } });
    if (req.headers["anthropic-version"] !== "2023-06-01") return send(res, 400, { type: "error", error: { type: "invalid_request_error", message: "anthropic-version header is required" } });
    const path = new URL(req.url!, "http://x").pathname;
    if (req.method === "POST" && path === "/v1/messages/batches") {
      const create = JSON.parse(body.toString()) as { requests?: { custom_id: string; params: Record<string, unknown> }[] };
      const requests = create.requests ?? [];
      const ids = new Set(requests.map((request) => request.custom_id));
      if (requests.length < 1 || requests.length > 100_000 || ids.size !== requests.length) return send(res, 400, { type: "error", error: { type: "invalid_request_error", message: "requests: invalid" } });
      const bad = requests.findIndex((request) => !/^[a-zA-Z0-9_-]{1,64}$/.test(request.custom_id) || request.params.stream === true || typeof request.params.max_tokens !== "number");
      if (bad !== -1) return send(res, 400, { type: "error", error: { type: "invalid_request_error", message: `requests.${bad}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'` } });
      const batch: MockBatch = { id: `msgbatch_${nextId("01")}`, api: "anthropic", lines: requests.map((request) => ({ custom_id: request.custom_id, body: request.params })), metadata: null, endpoint: null, createdAt: Date.now(), status: "in_progress", outcomes: null };
      batches.push(batch);
      return send(res, 200, anthropicBatch(batch));
    }
    const match = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    if (match) {
      const batch = batches.find((candidate) => candidate.id === decodeURIComponent(match[1]!));
      if (!batch) return send(res, 404, { type: "error", error: { type: "not_found_error", message: `Message Batch ${match[1]} not found` } });
      if (match[2] === "/cancel" && req.method === "POST") {
        if (batch.outcomes === null) batch.status = "canceling";
        return send(res, 200, anthropicBatch(batch));
      }
      if (match[2] === "/results") {
        if (batch.outcomes === null) return send(res, 404, { type: "error", error: { type: "not_found_error", message: `Message Batch ${batch.id} has no available results.` } }, { "x-should-retry": "false" });
        const lines = batch.lines.map((line) => JSON.stringify({ custom_id: line.custom_id, result: anthropicResult(batch.outcomes!.get(line.custom_id)!) }));
        res.writeHead(200, { "content-type": "application/x-jsonl" });
        res.end(`${lines.join("\n")}\n`);
        return;
      }
      return send(res, 200, anthropicBatch(batch), batch.outcomes === null ? { "retry-after": "10" } : {});
    }
    send(res, 404, { type: "error", error: { type: "not_found_error", message: "Not found" } });
  }

  function anthropicBatch(batch: MockBatch): Record<string, unknown> {
    const ended = batch.outcomes !== null;
    const counts = { processing: ended ? 0 : batch.lines.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    if (ended) for (const outcome of batch.outcomes!.values()) counts[anthropicResult(outcome).type as "succeeded"] += 1;
    const created = new Date(batch.createdAt).toISOString().replace("Z", "000+00:00");
    return {
      id: batch.id,
      type: "message_batch",
      processing_status: ended ? "ended" : batch.status,
      request_counts: counts,
      ended_at: ended ? new Date().toISOString().replace("Z", "000+00:00") : null,
      created_at: created,
      expires_at: new Date(batch.createdAt + 86_400_000).toISOString().replace("Z", "000+00:00"),
      archived_at: null,
      cancel_initiated_at: batch.status === "canceling" ? created : null,
      // A hostile or mistaken results_url: the engine must use the batch's own path on its endpoint.
      results_url: ended ? `http://169.254.169.254/v1/messages/batches/${batch.id}/results` : null,
    };
  }

  const address = await new Promise<AddressInfo>((done) => server.listen(0, "127.0.0.1", () => done(server.address() as AddressInfo)));
  const origin = `http://127.0.0.1:${address.port}`;
  return {
    baseUrl: api === "openai" ? `${origin}/v1` : origin,
    batches,
    log,
    end(batchId, answer) {
      const batch = batches.find((candidate) => candidate.id === batchId);
      if (!batch) throw new Error(`no batch ${batchId}`);
      batch.outcomes = new Map(batch.lines.map((line) => [line.custom_id, answer(line)]));
      if (api === "anthropic") {
        batch.status = "ended";
        return;
      }
      batch.status = "completed";
      const output: string[] = [];
      const errors: string[] = [];
      for (const line of batch.lines) {
        const outcome = batch.outcomes.get(line.custom_id)!;
        const id = `batch_req_${nextId("")}`;
        if ("error" in outcome) errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: null, error: outcome.error }));
        else if ("type" in outcome) errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: null, error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." } }));
        else if ("status" in outcome) errors.push(JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: outcome.status, request_id: "req", body: outcome.body }, error: null }));
        else output.push(JSON.stringify({ id, custom_id: line.custom_id, response: { status_code: 200, request_id: "792c1a99-eabf-4ce2-82bf-f0256f7de7f1", body: outcome.body }, error: null }));
      }
      const extra = batch as MockBatch & { outputFileId?: string; errorFileId?: string };
      if (output.length > 0) files.set((extra.outputFileId = `file-${nextId("out")}`), Buffer.from(`${output.join("\n")}\n`));
      if (errors.length > 0) files.set((extra.errorFileId = `file-${nextId("err")}`), Buffer.from(`${errors.join("\n")}\n`));
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}

function anthropicResult(outcome: BatchOutcome): Record<string, unknown> {
  if ("type" in outcome) return { type: outcome.type };
  if ("error" in outcome) return { type: "errored", error: { type: "error", error: { type: "api_error", message: outcome.error.message } } };
  if ("status" in outcome) return { type: "errored", error: outcome.body };
  return { type: "succeeded", message: outcome.body };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The named parts of a multipart/form-data body. */
function multipart(contentType: string, body: Buffer): Map<string, Buffer> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const parts = new Map<string, Buffer>();
  if (!boundary) return parts;
  const marker = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  let at = body.indexOf(marker);
  while (at !== -1) {
    const next = body.indexOf(marker, at + marker.length);
    if (next === -1) break;
    const part = body.subarray(at + marker.length + 2, next - 2);
    const split = part.indexOf("\r\n\r\n");
    const head = part.subarray(0, split).toString();
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (name) parts.set(name, part.subarray(split + 4));
    at = next;
  }
  return parts;
}
