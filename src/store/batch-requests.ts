// The requests a run queued for a batch (io/batch/<custom id>.json), read back the safe, bounded way for `batch submit` and for `continue --live`.
import { join } from "node:path";
import { z } from "zod";
import type { LlmRequest } from "../conversation.js";
import { JournalError } from "../errors.js";
import { CUSTOM_ID_PATTERN } from "../journal/events.js";
import { LlmRequestSchema } from "./invocation-record.js";
import { readIoRecord } from "./io-records.js";
import type { RunPaths } from "./run-dir.js";

const BatchRequestRecordSchema = z.object({ iteration: z.number().int().positive(), custom_id: z.string(), request: LlmRequestSchema });

/** The request queued under `customId`; its file is named by the id alone (never by a path the journal gives). */
export function readBatchRequest(paths: Pick<RunPaths, "runDir">, customId: string): LlmRequest {
  if (!CUSTOM_ID_PATTERN.test(customId)) throw new JournalError(`${paths.runDir}: ${JSON.stringify(customId)} is not a custom id a batched call can have.`);
  const file = join(paths.runDir, "io", "batch", `${customId}.json`);
  const read = readIoRecord(file, BatchRequestRecordSchema);
  if ("problem" in read) throw new JournalError(`${file}: not a queued request (${read.problem}); the call cannot be sent. Continue the run with -m to ask anew.`);
  if (read.data.custom_id !== customId) throw new JournalError(`${file}: holds the request of ${read.data.custom_id}, not of ${customId}.`);
  // Validated, but kept as written: what the model sent back (reasoning, signatures) goes out byte for byte.
  return (read.raw as { request: LlmRequest }).request;
}
