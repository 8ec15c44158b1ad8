// When each model call of a run happened and how long it took, from the run's io/invocations/ records.
import { readdirSync } from "node:fs";
import { readRunFile } from "../safe-open.js";
import { join } from "node:path";
import { z } from "zod";
import { errorMessage } from "../errors.js";
import type { RunPaths } from "../store/run-dir.js";

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

/** Every readable record, in time order; an unreadable one is reported through warn and left out. */
export function readModelCalls(paths: RunPaths, warn: (line: string) => void): ModelCall[] {
  let names: string[];
  try {
    names = readdirSync(paths.invocationsDir).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  const calls: ModelCall[] = [];
  for (const name of names.sort()) {
    const file = join(paths.invocationsDir, name);
    try {
      const timing = InvocationTimingSchema.parse(JSON.parse(readRunFile(file)));
      const start = Date.parse(timing.timestamp);
      if (Number.isNaN(start)) throw new Error(`timestamp ${JSON.stringify(timing.timestamp)} is not a date`);
      calls.push({ iteration: timing.iteration, start, durationMs: timing.duration_ms, file });
    } catch (err) {
      warn(`${file}: left out of the timeline (${errorMessage(err)})`);
    }
  }
  return calls.sort((a, b) => a.start - b.start);
}
