// Sending queued calls in batches: split at the provider's limits, each submission journaled in every run it holds before anything is sent and its batch id after; an earlier submission whose answer was lost found again, or left in doubt.
import { BatchHttpError } from "../llm/batch/batch-http.js";
import type { BatchClient, BatchLine } from "../llm/batch/batch-client.js";
import { errorMessage, LlmError } from "../errors.js";
import type { NewEvent } from "../journal/events.js";
import { pausePoint } from "../pause-point.js";
import { randomHex } from "../random-hex.js";

/** One queued call ready to go: its custom id and request body, and its run's journal (appended under that run's lease, durably). */
export interface SubmittableCall {
  runId: string;
  iteration: number;
  customId: string;
  body: unknown;
  journal(event: NewEvent): void;
}

/** A call whose submission's answer was lost: the submission and when it began (epoch ms). */
export interface DoubtfulCall extends SubmittableCall {
  submissionId: string;
  submittedAt: number;
  requests: number;
}

export interface SubmissionReport {
  /** Each batch made (or found again) and the calls it holds. */
  batches: { batchId: string; calls: number; found: boolean }[];
  /** Calls not sent, and why (too large for a batch, the provider refused the submission, in doubt). */
  notSent: { runId: string; customId: string; why: string }[];
}

interface SubmitOptions {
  progress(line: string): void;
  signal?: AbortSignal;
  /** --resubmit: calls whose earlier submission cannot be looked up are sent again (and may be billed twice). */
  resubmit: boolean;
}

/**
 * First settles the calls whose earlier submission's answer was lost (found by the provider: its batch id journaled; known
 * never made: sent again; unknowable: left in doubt unless --resubmit), then sends the rest in batches of at most the
 * provider's limits. A batch the provider refused (4xx: nothing made) returns its calls to the queue, journaled.
 */
export async function submitCalls(client: BatchClient, fresh: readonly SubmittableCall[], doubtful: readonly DoubtfulCall[], options: SubmitOptions): Promise<SubmissionReport> {
  const report: SubmissionReport = { batches: [], notSent: [] };
  const toSend = [...fresh];
  for (const [submissionId, calls] of groupBy(doubtful, (call) => call.submissionId)) {
    const since = Math.min(...calls.map((call) => call.submittedAt));
    const found = await client.find(submissionId, since, options.signal);
    if (typeof found === "object") {
      for (const call of calls) call.journal(submittedEvent(call, submissionId, found.batchId, calls[0]!.requests));
      report.batches.push({ batchId: found.batchId, calls: calls.length, found: true });
      options.progress(`[batch] submission ${submissionId} was accepted as batch ${found.batchId} before its answer was lost; its ${calls.length} call${calls.length === 1 ? "" : "s"} now name it (nothing sent again)`);
    } else if (found === "none") {
      options.progress(`[batch] submission ${submissionId} made no batch at ${client.name}; its calls are sent again`);
      toSend.push(...calls);
    } else if (options.resubmit) {
      options.progress(`[warning] submission ${submissionId}: ${client.name} cannot be asked whether it made a batch; --resubmit sends its ${calls.length} call${calls.length === 1 ? "" : "s"} again, which may bill them twice`);
      toSend.push(...calls);
    } else {
      const why = `submission ${submissionId} is in doubt: its answer was lost, and ${client.name} keeps nothing to look it up by. Check the provider's console for a batch created at ${new Date(since).toISOString()}; if there is none, \`delta batch submit --resubmit\` sends the calls again (if there is one, they would be billed twice)`;
      for (const call of calls) report.notSent.push({ runId: call.runId, customId: call.customId, why });
    }
  }
  for (const chunk of chunks(client, toSend, report)) await submitChunk(client, chunk, report, options);
  return report;
}

async function submitChunk(client: BatchClient, calls: readonly SubmittableCall[], report: SubmissionReport, options: SubmitOptions): Promise<void> {
  const submissionId = `s${Date.now().toString(36)}-${randomHex(6)}`;
  for (const call of calls) call.journal(submittedEvent(call, submissionId, null, calls.length));
  const lines: BatchLine[] = calls.map((call) => ({ customId: call.customId, body: call.body }));
  let batchId: string;
  try {
    batchId = await client.submit(submissionId, lines, options.signal);
  } catch (err) {
    // A refusal (4xx but a timeout or a limit) made nothing: the calls are queued again. Anything else may have made a batch.
    if (err instanceof BatchHttpError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429) {
      for (const call of calls) call.journal({ ...submittedEvent(call, submissionId, null, calls.length), failed: errorMessage(err).slice(0, 500) });
      for (const call of calls) report.notSent.push({ runId: call.runId, customId: call.customId, why: `${client.name} refused the batch: ${errorMessage(err)}` });
      return;
    }
    throw new LlmError(`${errorMessage(err)}. Submission ${submissionId} (${calls.length} call${calls.length === 1 ? "" : "s"}) may or may not have been accepted: \`delta batch submit\` again looks for it before sending anything`, { cause: err });
  }
  pausePoint("batch-accepted");
  for (const call of calls) call.journal(submittedEvent(call, submissionId, batchId, calls.length));
  report.batches.push({ batchId, calls: calls.length, found: false });
  options.progress(`[batch] submitted ${calls.length} call${calls.length === 1 ? "" : "s"} to ${client.name} as batch ${batchId}`);
}

function submittedEvent(call: SubmittableCall, submissionId: string, batchId: string | null, requests: number): Extract<NewEvent, { type: "MODEL_SUBMITTED" }> {
  return { type: "MODEL_SUBMITTED", iteration: call.iteration, custom_id: call.customId, submission_id: submissionId, batch_id: batchId, requests };
}

/** The calls in batches of at most the provider's requests and bytes; a call larger than a whole batch is not sent. */
function* chunks(client: BatchClient, calls: readonly SubmittableCall[], report: SubmissionReport): Generator<SubmittableCall[]> {
  let chunk: SubmittableCall[] = [];
  let bytes = 0;
  for (const call of calls) {
    const size = client.size({ customId: call.customId, body: call.body });
    if (size > client.limits.bytes) {
      report.notSent.push({ runId: call.runId, customId: call.customId, why: `its request is ${size} bytes, more than a whole ${client.name} batch may hold (${client.limits.bytes}); continue the run with --live to send it` });
      continue;
    }
    if (chunk.length > 0 && (chunk.length >= client.limits.requests || bytes + size > client.limits.bytes)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(call);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}
