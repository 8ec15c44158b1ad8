// The ids of a run's trace: the trace id the first ENGINE_START journals, and span ids derived from (trace id, seq).
import type { EventOf, JournalEvent } from "../journal/events.js";
import { randomHex } from "../random-hex.js";

/** A W3C trace context as `TRACEPARENT` carries it. */
interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

/** The caller's trace context from a `TRACEPARENT` value, or null when it is absent or not a valid W3C traceparent (version ff and all-zero ids are invalid). */
export function parseTraceParent(value: string | undefined): TraceParent | null {
  const match = TRACEPARENT.exec(value?.trim().toLowerCase() ?? "");
  if (!match || match[1] === "ff" || ALL_ZERO.test(match[2]!) || ALL_ZERO.test(match[3]!)) return null;
  return { traceId: match[2]!, spanId: match[3]!, sampled: (parseInt(match[4]!, 16) & 1) === 1 };
}

/** The `TRACEPARENT` value naming one span of a trace. */
export function formatTraceParent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? "01" : "00"}`;
}

/** The trace fields of a run's first ENGINE_START: the caller's trace (and its span as the parent) or a new random trace. */
export function newRunTrace(parent: TraceParent | null): { trace_id: string; parent_span_id?: string; parent_sampled?: boolean } {
  if (parent) return { trace_id: parent.traceId, parent_span_id: parent.spanId, parent_sampled: parent.sampled };
  let traceId = randomHex(16);
  while (ALL_ZERO.test(traceId)) traceId = randomHex(16);
  return { trace_id: traceId };
}

/** A run's trace: its id, the caller's span its spans hang under and that caller's sampled flag (null without a caller). */
export interface RunTrace {
  traceId: string;
  parentSpanId: string | null;
  parentSampled: boolean | null;
}

/**
 * The run's trace id and the span its spans hang under: what the first ENGINE_START journaled, or,
 * for a journal written before those fields existed, an id derived from the run id, the work dir and
 * that event's timestamp (the same journal always gives the same id; two runs of one id in two
 * workspaces give two).
 */
export function runTraceOf(first: EventOf<"ENGINE_START">): RunTrace {
  if (first.trace_id !== undefined) {
    const parentSpanId = first.parent_span_id ?? null;
    // A parent journaled before its flag was: it was exported then, as a sampled one.
    return { traceId: first.trace_id, parentSpanId, parentSampled: parentSpanId === null ? null : (first.parent_sampled ?? true) };
  }
  const key = `${first.run_id}\n${first.work_dir}\n${first.timestamp}`;
  return { traceId: fnv64(key, 0) + fnv64(key, 1), parentSpanId: null, parentSampled: null };
}

/** The trace of a journal, from its first event (all it needs of the journal); null when it does not start with ENGINE_START. */
export function journalTraceOf(first: JournalEvent | null | undefined): RunTrace | null {
  return first?.type === "ENGINE_START" ? runTraceOf(first) : null;
}

/** The span id of the span the event `seq` of the trace's run opens: the same on every export, live or later. */
export function spanIdOf(traceId: string, seq: number): string {
  const id = fnv64(`${traceId}:${seq}`, 2);
  return ALL_ZERO.test(id) ? "0000000000000001" : id;
}

const FNV_PRIME = 0x100000001b3n;
const MASK = 0xffffffffffffffffn;

/** 64-bit FNV-1a of `text` (UTF-16 code units) with a seed folded in first, as 16 hex digits: stable ids without loading node:crypto. */
function fnv64(text: string, seed: number): string {
  let hash = 0xcbf29ce484222325n;
  const feed = (code: number): void => {
    hash ^= BigInt(code);
    hash = (hash * FNV_PRIME) & MASK;
  };
  feed(seed);
  for (let index = 0; index < text.length; index += 1) feed(text.charCodeAt(index));
  // A final mix so ids of neighbouring seqs differ in every digit, not only the last ones.
  hash ^= hash >> 33n;
  hash = (hash * 0xff51afd7ed558ccdn) & MASK;
  hash ^= hash >> 33n;
  return hash.toString(16).padStart(16, "0");
}
