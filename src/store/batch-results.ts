// Results of ended batches that `continue --due` read once and hands to the continue of each run (a private folder named by DELTA_BATCH_RESULTS_DIR): one file per custom id, so a batch's results are downloaded once, not once per run.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CUSTOM_ID_PATTERN } from "../journal/events.js";
import type { BatchResult } from "../llm/batch/batch-client.js";
import { PRIVATE_FILE_MODE } from "../private-modes.js";
import { readIoRecord } from "./io-records.js";

/** The variable that names the folder to a child `delta continue`. */
export const BATCH_RESULTS_DIR_VARIABLE = "DELTA_BATCH_RESULTS_DIR";

const HandedResultSchema = z.object({
  batch_id: z.string(),
  custom_id: z.string(),
  result: z.union([
    z.object({ kind: z.literal("succeeded"), body: z.unknown() }),
    z.object({ kind: z.literal("failed"), reason: z.string(), httpStatus: z.number().optional(), serverMessage: z.string().optional(), serverCode: z.string().optional() }),
  ]),
});

export function writeHandedResult(dir: string, batchId: string, customId: string, result: BatchResult): void {
  if (!CUSTOM_ID_PATTERN.test(customId)) return;
  writeFileSync(join(dir, `${customId}.json`), JSON.stringify({ batch_id: batchId, custom_id: customId, result }), { flag: "wx", mode: PRIVATE_FILE_MODE });
}

/** The result handed for `customId` of batch `batchId`, or null when none was (the run then asks the provider itself). */
export function readHandedResult(dir: string, batchId: string, customId: string): BatchResult | null {
  if (!CUSTOM_ID_PATTERN.test(customId)) return null;
  const file = join(dir, `${customId}.json`);
  if (!existsSync(file)) return null;
  const read = readIoRecord(file, HandedResultSchema);
  if ("problem" in read || read.data.batch_id !== batchId || read.data.custom_id !== customId) return null;
  return read.data.result as BatchResult;
}
