// When each model call of a run happened and how long it took, from the run's io/invocations/ records.
import { z } from "zod";
import { readIoRecords } from "../store/io-records.js";
import type { RunPaths } from "../store/run-dir.js";
import type { RunAccount } from "./run-account.js";

/** The part of an invocation record a timeline needs; the request and reply stay in the file. */
const InvocationTimingSchema = z.object({
  iteration: z.number().int().positive(),
  timestamp: z.string(),
  duration_ms: z.number().nonnegative(),
});

export interface ModelCall {
  iteration: number;
  /** Epoch ms when the request was sent. */
  start: number;
  durationMs: number;
  file: string;
}

/**
 * The records an account's timeline needs: none when every THOUGHT carries its call's own start and duration (every
 * journal since they were added), so a long run's folder of records is read only for a journal from before that.
 */
export function modelCallsFor(account: RunAccount, warn: (line: string) => void): ModelCall[] {
  const timed = account.iterations.every(({ thought }) => thought.started_at !== undefined && thought.duration_ms !== undefined);
  return timed ? [] : readModelCalls(account.paths, warn);
}

/** Every readable record, in time order; an unreadable one is reported through warn and left out. */
function readModelCalls(paths: RunPaths, warn: (line: string) => void): ModelCall[] {
  const leftOut = (file: string, problem: string): void => warn(`${file}: left out of the timeline (${problem})`);
  const calls: ModelCall[] = [];
  for (const { file, data: timing } of readIoRecords(paths.invocationsDir, InvocationTimingSchema, leftOut)) {
    const start = Date.parse(timing.timestamp);
    if (Number.isNaN(start)) leftOut(file, `timestamp ${JSON.stringify(timing.timestamp)} is not a date`);
    else calls.push({ iteration: timing.iteration, start, durationMs: timing.duration_ms, file });
  }
  return calls.sort((a, b) => a.start - b.start);
}
