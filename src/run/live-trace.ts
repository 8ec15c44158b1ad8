// Live export of a run's spans, when the OTEL_* environment asks for it: decided from the environment alone, the SDK loaded only then.
import type { JournalEvent } from "../journal/events.js";
import { liveExportChoice } from "../trace/otel-env.js";
import type { LiveTrace } from "../trace/otlp-export.js";
import { journalTraceOf } from "../trace/trace-ids.js";

interface JournalSoFar {
  /** Its first event: the run's trace, and whether it is sampled. */
  first: JournalEvent | null;
  /** The journal file, streamed from its start only when spans are exported. */
  path: string;
}

/**
 * The live trace of this process's part of a run, or null when nothing is exported. `journal`: the journal so far;
 * events from `fromSeq` on were written by this process (a janitor's end of a dead invocation included), so the
 * spans they end are sent; those before were sent by the processes that wrote them.
 */
export async function openLiveTrace(journal: JournalSoFar, fromSeq: number, secrets: readonly string[], warn: (line: string) => void): Promise<LiveTrace | null> {
  // Sampled once per run: from the trace id and the caller's flag its first ENGINE_START journaled.
  const choice = liveExportChoice(process.env, journalTraceOf(journal.first));
  if (choice.warning !== undefined) warn(choice.warning);
  if (choice.kind !== "on") return null;
  const { startLiveTrace } = await import("../trace/otlp-export.js");
  return startLiveTrace({ settings: choice.settings, env: process.env, journal: journal.path, fromSeq, secrets });
}
