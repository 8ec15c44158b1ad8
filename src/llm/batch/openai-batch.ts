// OpenAI's Batch API (Chat Completions and Responses): a JSONL file uploaded (purpose batch), a batch created on it with the submission id in its metadata, polled, its output and error files read.
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { LlmError } from "../../errors.js";
import { isRecord } from "../is-record.js";
import { serverWords } from "../server-words.js";
import { type BatchEndpoint, batchUrl, exchange, exchangeLines, jsonOf, JSON_REPLY_LIMIT, resultLine } from "./batch-http.js";
import { RESULT_LINE_LIMIT, RESULTS_LIMIT, type BatchClient, type BatchLine, type BatchResult, type BatchState } from "./batch-client.js";

/** The metadata key that carries the engine's submission id: how a second submit finds a batch whose id was lost. */
const SUBMISSION_KEY = "delta_submission_id";
/** OpenAI's limits per batch (openai-node batches.ts: 50,000 requests, 200 MB input file). */
const LIMITS = { requests: 50_000, bytes: 200 * 1000 * 1000 };
/** Terminal statuses (openai-node batches.ts: `failed`, `completed`, `expired`, `cancelled`). */
const ENDED = new Set(["failed", "completed", "expired", "cancelled"]);
/** Pages of the batch list read when looking for a lost submission (100 batches each). */
const MAX_LIST_PAGES = 50;

/** The fields of a Batch object the engine reads (openai-node `Batch`); the rest is the provider's. */
const BatchObjectSchema = z.looseObject({
  id: z.string().min(1).max(256),
  status: z.string().max(64),
  created_at: z.number().optional(),
  output_file_id: z.string().max(256).nullable().optional(),
  error_file_id: z.string().max(256).nullable().optional(),
  metadata: z.record(z.string(), z.unknown()).nullable().optional(),
  request_counts: z.looseObject({ total: z.number(), completed: z.number(), failed: z.number() }).optional(),
  errors: z.unknown().optional(),
});
type BatchObject = z.infer<typeof BatchObjectSchema>;

const ListSchema = z.looseObject({ data: z.array(z.unknown()), has_more: z.boolean().optional() });

/** An output or error file's line (the former `BatchRequestOutput`: id, custom_id, response {status_code, body} or error {code, message}). */
const OutputLineSchema = z.looseObject({
  custom_id: z.string(),
  response: z.looseObject({ status_code: z.number(), body: z.unknown() }).nullable().optional(),
  error: z.looseObject({ code: z.string().nullable().optional(), message: z.string().nullable().optional() }).nullable().optional(),
});

/** `endpointPath`: the API path every line's request goes to (`/v1/chat/completions`, `/v1/responses`). */
export function openAiBatchClient(endpoint: BatchEndpoint, endpointPath: string, secrets: readonly string[]): BatchClient {
  const lineOf = (line: BatchLine): string => `${JSON.stringify({ custom_id: line.customId, method: "POST", url: endpointPath, body: line.body })}\n`;
  const batchOf = async (reply: Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>, what: string): Promise<BatchObject> => readBatch(jsonOf(await reply, what, secrets), what);
  const client: BatchClient = {
    name: "OpenAI Batch",
    limits: LIMITS,
    size: (line) => Buffer.byteLength(lineOf(line)),
    async submit(submissionId, lines, signal) {
      const file = Buffer.from(lines.map(lineOf).join(""));
      const boundary = `delta-${randomUUID()}`;
      const multipart = [
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n`),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${submissionId}.jsonl"\r\nContent-Type: application/jsonl\r\n\r\n`),
        file,
        Buffer.from(`\r\n--${boundary}--\r\n`),
      ];
      const uploadUrl = batchUrl(endpoint, "/files");
      const uploaded = jsonOf(await exchange(endpoint, "POST", uploadUrl, multipart, { "content-type": `multipart/form-data; boundary=${boundary}` }, JSON_REPLY_LIMIT, signal), "uploading the batch's input file", secrets);
      if (typeof uploaded.id !== "string" || uploaded.id === "") throw new LlmError("uploading the batch's input file: the reply names no file id");
      const body = JSON.stringify({ input_file_id: uploaded.id, endpoint: endpointPath, completion_window: "24h", metadata: { [SUBMISSION_KEY]: submissionId } });
      const created = await batchOf(exchange(endpoint, "POST", batchUrl(endpoint, "/batches"), [Buffer.from(body)], { "content-type": "application/json" }, JSON_REPLY_LIMIT, signal), "creating the batch");
      return created.id;
    },
    async find(submissionId, since, signal) {
      let after: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
        const url = batchUrl(endpoint, "/batches", { limit: "100", ...(after ? { after } : {}) });
        const listed = ListSchema.safeParse(jsonOf(await exchange(endpoint, "GET", url, undefined, {}, JSON_REPLY_LIMIT, signal), "listing batches", secrets));
        if (!listed.success) throw new LlmError("listing batches: the reply is not a list of batches");
        let older = false;
        for (const item of listed.data.data) {
          const batch = BatchObjectSchema.safeParse(item);
          if (!batch.success) continue;
          if (batch.data.metadata?.[SUBMISSION_KEY] === submissionId) return { batchId: batch.data.id };
          // Newest first: a batch created well before the submission began ends the search (a minute for clocks apart).
          if (batch.data.created_at !== undefined && batch.data.created_at * 1000 < since - 60_000) older = true;
          after = batch.data.id;
        }
        if (older || listed.data.has_more !== true || listed.data.data.length === 0) return "none";
      }
      throw new LlmError(`looking for submission ${submissionId}: not found in the newest ${MAX_LIST_PAGES * 100} batches; nothing was sent again`);
    },
    async state(batchId, signal) {
      return stateOf(await batchOf(exchange(endpoint, "GET", batchUrl(endpoint, `/batches/${encodeURIComponent(batchId)}`), undefined, {}, JSON_REPLY_LIMIT, signal), `asking batch ${batchId}`));
    },
    async cancel(batchId, signal) {
      return stateOf(await batchOf(exchange(endpoint, "POST", batchUrl(endpoint, `/batches/${encodeURIComponent(batchId)}/cancel`), [], {}, JSON_REPLY_LIMIT, signal), `cancelling batch ${batchId}`));
    },
    async results(state, wanted, signal) {
      const batch = (state as BatchState & { object?: BatchObject }).object ?? (await batchOf(exchange(endpoint, "GET", batchUrl(endpoint, `/batches/${encodeURIComponent(state.id)}`), undefined, {}, JSON_REPLY_LIMIT, signal), `asking batch ${state.id}`));
      const found = new Map<string, BatchResult>();
      for (const fileId of [batch.output_file_id, batch.error_file_id]) {
        if (typeof fileId !== "string" || fileId === "") continue;
        const what = `reading file ${fileId} of batch ${state.id}`;
        await exchangeLines(endpoint, batchUrl(endpoint, `/files/${encodeURIComponent(fileId)}/content`), what, secrets, { line: RESULT_LINE_LIMIT, total: RESULTS_LIMIT }, (text, number) => {
          const line = resultLine(OutputLineSchema, text, number, what);
          if (wanted.has(line.custom_id) && !found.has(line.custom_id)) found.set(line.custom_id, resultOf(line));
        }, signal);
      }
      // A call the batch ended without answering (it failed validation, expired or was cancelled before it ran).
      for (const id of wanted) if (!found.has(id) && ENDED.has(batch.status)) found.set(id, { kind: "failed", reason: `the batch ended ${batch.status} with no result for it${describeErrors(batch)}` });
      return found;
    },
  };
  return client;
}

function readBatch(json: Record<string, unknown>, what: string): BatchObject {
  const parsed = BatchObjectSchema.safeParse(json);
  if (!parsed.success) throw new LlmError(`${what}: the reply is not a batch object (${parsed.error.issues[0]?.path.join(".") || "body"}: ${parsed.error.issues[0]?.message})`);
  return parsed.data;
}

function stateOf(batch: BatchObject): BatchState & { object: BatchObject } {
  const counts: Record<string, number> = batch.request_counts ? { total: batch.request_counts.total, completed: batch.request_counts.completed, failed: batch.request_counts.failed } : {};
  return { id: batch.id, status: batch.status, ended: ENDED.has(batch.status), counts, object: batch };
}

function resultOf(line: z.infer<typeof OutputLineSchema>): BatchResult {
  const response = line.response;
  if (response && response.status_code >= 200 && response.status_code <= 299) return { kind: "succeeded", body: response.body };
  if (response) {
    const words = serverWords(response.body);
    return { kind: "failed", reason: `HTTP ${response.status_code}${words ? `: ${words.message}` : ""}`, httpStatus: response.status_code, ...(words ? { serverMessage: words.message } : {}), ...(words?.code ? { serverCode: words.code } : {}) };
  }
  const code = line.error?.code ?? undefined;
  const message = line.error?.message ?? "no response";
  return { kind: "failed", reason: `${code ? `${code}: ` : ""}${message}`, serverMessage: message, ...(code ? { serverCode: code } : {}) };
}

function describeErrors(batch: BatchObject): string {
  const errors = isRecord(batch.errors) && Array.isArray(batch.errors.data) ? batch.errors.data : [];
  const first = errors.find(isRecord);
  return first && typeof first.message === "string" ? ` (${first.message.slice(0, 300)})` : "";
}
