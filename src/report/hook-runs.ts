// When each hook of a run ran and how it ended, from the run's io/hooks/ records, for the timeline.
import { z } from "zod";
import { errorMessage } from "../errors.js";
import { HookRecordSchema } from "../hooks/types.js";
import { readIoRecords } from "../store/io-records.js";
import type { RunPaths } from "../store/run-dir.js";

/** The part of a hook record a timeline needs. */
const HookTimingSchema = HookRecordSchema.pick({ hook: true, started_at: true, stdin: true, duration_ms: true, outcome: true });
const HookStdinSchema = z.object({ iteration: z.number().int().nonnegative() });

export interface HookRun {
  hook: string;
  /** The iteration the hook's stdin named (0 before the first). */
  iteration: number;
  /** Epoch ms. */
  start: number;
  durationMs: number;
  /** `continue`, `block`, or `warning` for a hook that failed open. */
  outcome: string;
}

/** Every readable record in time order; an unreadable one is reported through warn and left out. */
export function readHookRuns(paths: RunPaths, warn: (line: string) => void): HookRun[] {
  const leftOut = (file: string, problem: string): void => warn(`${file}: left out of the timeline (${problem})`);
  const runs: HookRun[] = [];
  for (const { file, data: record } of readIoRecords(paths.hooksDir, HookTimingSchema, leftOut)) {
    try {
      const start = Date.parse(record.started_at);
      if (Number.isNaN(start)) throw new Error(`started_at ${JSON.stringify(record.started_at)} is not a date`);
      const { iteration } = HookStdinSchema.parse(JSON.parse(record.stdin));
      const outcome = record.outcome.kind === "continue" && record.outcome.warning !== undefined ? "warning" : record.outcome.kind;
      runs.push({ hook: record.hook, iteration, start, durationMs: record.duration_ms, outcome });
    } catch (err) {
      leftOut(file, errorMessage(err));
    }
  }
  return runs.sort((a, b) => a.start - b.start);
}
