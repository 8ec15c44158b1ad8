// The loop's batch port over the run this process holds: a queued request recorded under its custom id, collected from its ended batch through the provider's batch API, or sent in a batch of its own (--submit).
import type { LlmReply } from "../conversation.js";
import { errorMessage } from "../errors.js";
import type { BatchApi, EventOf } from "../journal/events.js";
import type { BatchClient } from "../llm/batch/batch-client.js";
import { batchClientFor } from "../llm/batch/batch-clients.js";
import { protocolOf, type ProviderChoice } from "../llm/provider-choice.js";
import type { BatchAnswer, LoopBatch } from "../loop/ports.js";
import { randomHex } from "../random-hex.js";
import { readBatchRequest } from "../store/batch-requests.js";
import { BATCH_RESULTS_DIR_VARIABLE, readHandedResult } from "../store/batch-results.js";
import type { WritableRunFiles } from "../store/run-files.js";
import { submitCalls } from "./batch-submission.js";
import type { RunBatchMode } from "./batch-mode.js";

interface BatchGround {
  runId: string;
  files: WritableRunFiles;
  provider: ProviderChoice;
  /** The run's batching, or null when it sends live and only a call left waiting in a batch is to be collected. */
  mode: RunBatchMode | null;
  /** The batch API of a call left waiting, when the mode is null. */
  waitingApi: BatchApi | null;
  maxToolCalls: number;
  progress(line: string): void;
  signal: AbortSignal;
}

/** Null when the run neither batches nor has a call waiting in a batch. */
export function batchPort(ground: BatchGround): LoopBatch | null {
  const api = ground.mode?.api ?? ground.waitingApi;
  if (api === null) return null;
  const { files, provider } = ground;
  let client: Promise<BatchClient> | null = null;
  const clientOf = (): Promise<BatchClient> => {
    const access = provider.access;
    if (access === undefined) throw new Error("a replayed run has no batch API");
    return (client ??= batchClientFor(api, provider.protocol, access, files.secrets));
  };
  const endpoint = provider.describe.endpoint;
  return {
    queues: ground.mode !== null,
    live: ground.mode?.live ?? false,
    queue(iteration, request) {
      const customId = customIdFor(ground.runId, iteration);
      const record = files.writeBatchRequest({ iteration, custom_id: customId, request });
      return { custom_id: customId, request_record: record, batch_api: api, provider: endpoint?.provider ?? provider.protocol, base_url: endpoint?.base_url ?? "", model: request.model };
    },
    request: (queued) => readBatchRequest(files.paths, queued.custom_id),
    submitOwn: ground.mode?.submit
      ? async (queued) => {
          try {
            const body = (await protocolOf(provider.protocol)).body(readBatchRequest(files.paths, queued.custom_id), { stream: false, withoutEcho: false });
            const journal = (event: Parameters<WritableRunFiles["journal"]["append"]>[0]): void => {
              files.journal.append(event);
              files.journal.sync();
            };
            const report = await submitCalls(await clientOf(), [{ runId: ground.runId, iteration: queued.iteration, customId: queued.custom_id, body, journal }], [], { progress: ground.progress, signal: ground.signal, resubmit: false });
            for (const left of report.notSent) ground.progress(`[warning] the call was not submitted: ${left.why}`);
          } catch (err) {
            ground.progress(`[warning] --submit: ${errorMessage(err)}`);
          }
        }
      : null,
    async collect(call) {
      const batchId = call.submitted?.batch_id;
      if (batchId === null || batchId === undefined) return null;
      // continue --due read the batch's results once for every run it continues.
      const handedDir = process.env[BATCH_RESULTS_DIR_VARIABLE];
      const handed = handedDir ? readHandedResult(handedDir, batchId, call.queued.custom_id) : null;
      if (handed !== null) return handed.kind === "failed" ? { ...handed, batchId } : replyOf(handed.body, call.queued, batchId, ground.maxToolCalls);
      const batches = await clientOf();
      const state = await batches.state(batchId, ground.signal);
      if (!state.ended) return null;
      const result = (await batches.results(state, new Set([call.queued.custom_id]), ground.signal)).get(call.queued.custom_id);
      if (result === undefined) return { kind: "failed", batchId, reason: `batch ${batchId} ended (${state.status}) with no result for the call` };
      if (result.kind === "failed") return { ...result, batchId };
      return replyOf(result.body, call.queued, batchId, ground.maxToolCalls);
    },
  };

  async function replyOf(body: unknown, queued: EventOf<"MODEL_QUEUED">, batchId: string, maxToolCalls: number): Promise<BatchAnswer> {
    const protocol = await protocolOf(provider.protocol);
    let reply: LlmReply;
    try {
      const { content, tool_calls, ...rest } = protocol.reply(body, queued.model);
      const usage = typeof body === "object" && body !== null && "usage" in body ? protocol.usage((body as { usage: unknown }).usage) : null;
      reply = { content, tool_calls, usage, ...rest };
    } catch (err) {
      return { kind: "failed", batchId, reason: `the batch's reply could not be used: ${errorMessage(err)}` };
    }
    if (reply.tool_calls.length > maxToolCalls) return { kind: "failed", batchId, reason: `the reply asked for ${reply.tool_calls.length} tool calls, more than llm.max_tool_calls (${maxToolCalls}); no tool ran` };
    return { kind: "reply", reply, batchId };
  }
}

/** A custom id for the call of `iteration`: the run id's readable part, the iteration, and a random part that keeps a re-queued call's id new (Anthropic's rule: `[A-Za-z0-9_-]{1,64}`). */
function customIdFor(runId: string, iteration: number): string {
  const tail = `-i${iteration}-${randomHex(4)}`;
  return `${runId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64 - tail.length)}${tail}`;
}
