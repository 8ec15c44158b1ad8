// Anthropic's Message Batches: the requests sent inline in one POST, the batch polled, its results read from the batch's own results path (never a URL the reply names).
import { z } from "zod";
import { LlmError } from "../../errors.js";
import { serverWords } from "../server-words.js";
import { type BatchEndpoint, batchUrl, exchange, exchangeLines, jsonOf, JSON_REPLY_LIMIT, resultLine } from "./batch-http.js";
import { RESULT_LINE_LIMIT, RESULTS_LIMIT, type BatchClient, type BatchLine, type BatchResult, type BatchState } from "./batch-client.js";

/** Anthropic's limits per batch (Message Batches guide: 100,000 requests or 256 MB). */
const LIMITS = { requests: 100_000, bytes: 256 * 1000 * 1000 };

/** The MessageBatch fields the engine reads (anthropic-sdk-typescript `MessageBatch`). */
const MessageBatchSchema = z.looseObject({
  id: z.string().min(1).max(256),
  processing_status: z.string().max(64),
  request_counts: z.record(z.string(), z.number()).optional(),
});

/** A results line (`MessageBatchIndividualResponse`): custom_id and a result of type succeeded, errored, canceled or expired. */
const ResultLineSchema = z.looseObject({
  custom_id: z.string(),
  result: z.looseObject({ type: z.string(), message: z.unknown().optional(), error: z.unknown().optional() }),
});

export function anthropicBatchClient(endpoint: BatchEndpoint, secrets: readonly string[]): BatchClient {
  const elementOf = (line: BatchLine): string => JSON.stringify({ custom_id: line.customId, params: line.body });
  const stateOfReply = async (reply: ReturnType<typeof exchange>, what: string): Promise<BatchState> => {
    const parsed = MessageBatchSchema.safeParse(jsonOf(await reply, what, secrets));
    if (!parsed.success) throw new LlmError(`${what}: the reply is not a message batch (${parsed.error.issues[0]?.path.join(".") || "body"}: ${parsed.error.issues[0]?.message})`);
    return { id: parsed.data.id, status: parsed.data.processing_status, ended: parsed.data.processing_status === "ended", counts: parsed.data.request_counts ?? {} };
  };
  const path = (batchId: string, rest = ""): string => `/v1/messages/batches/${encodeURIComponent(batchId)}${rest}`;
  return {
    name: "Anthropic Message Batches",
    limits: LIMITS,
    size: (line) => Buffer.byteLength(elementOf(line)) + 1,
    async submit(_submissionId, lines, signal) {
      // Message Batches keep no metadata: the submission id is journaled only, and a lost answer leaves the submission in doubt.
      const body = [Buffer.from('{"requests":['), Buffer.from(lines.map(elementOf).join(",")), Buffer.from("]}")];
      const state = await stateOfReply(exchange(endpoint, "POST", batchUrl(endpoint, "/v1/messages/batches"), body, { "content-type": "application/json" }, JSON_REPLY_LIMIT, signal), "creating the message batch");
      return state.id;
    },
    find: async () => "unknowable",
    state: (batchId, signal) => stateOfReply(exchange(endpoint, "GET", batchUrl(endpoint, path(batchId)), undefined, {}, JSON_REPLY_LIMIT, signal), `asking message batch ${batchId}`),
    cancel: (batchId, signal) => stateOfReply(exchange(endpoint, "POST", batchUrl(endpoint, path(batchId, "/cancel")), [], {}, JSON_REPLY_LIMIT, signal), `cancelling message batch ${batchId}`),
    async results(state, wanted, signal) {
      const found = new Map<string, BatchResult>();
      const what = `reading the results of message batch ${state.id}`;
      // The batch's own results path on the run's endpoint: a results_url naming another host would be sent the key.
      await exchangeLines(endpoint, batchUrl(endpoint, path(state.id, "/results")), what, secrets, { line: RESULT_LINE_LIMIT, total: RESULTS_LIMIT }, (text, number) => {
        const line = resultLine(ResultLineSchema, text, number, what);
        if (wanted.has(line.custom_id) && !found.has(line.custom_id)) found.set(line.custom_id, resultOf(line.result));
      }, signal);
      for (const id of wanted) if (!found.has(id)) found.set(id, { kind: "failed", reason: "the ended batch holds no result for it" });
      return found;
    },
  };
}

function resultOf(result: z.infer<typeof ResultLineSchema>["result"]): BatchResult {
  if (result.type === "succeeded") return { kind: "succeeded", body: result.message };
  if (result.type === "errored") {
    const words = serverWords(result.error);
    return { kind: "failed", reason: `errored${words ? `: ${words.message}` : ""}`, ...(words ? { serverMessage: words.message } : {}), ...(words?.code ? { serverCode: words.code } : {}) };
  }
  if (result.type === "expired") return { kind: "failed", reason: "expired: the batch did not reach it within 24 hours", serverCode: "expired" };
  if (result.type === "canceled") return { kind: "failed", reason: "canceled: the batch was cancelled before it ran", serverCode: "canceled" };
  return { kind: "failed", reason: `a result of type ${JSON.stringify(result.type.slice(0, 40))}, which the engine does not know` };
}
