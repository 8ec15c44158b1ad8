// The requests a run sent, rebuilt from its io/invocations/ records (whole ones as written, content-addressed ones from request-parts.jsonl), and the records in call order, one read at a time, for replay and comparison.
import { join } from "node:path";
import type { ChatMessage, FunctionTool, LlmRequest } from "../conversation.js";
import { JournalError } from "../errors.js";
import { readFirstEvent } from "../journal/reader.js";
import type { RunFacts } from "../llm/request-equality.js";
import { InvocationRecordSchema, type InvocationRecord } from "./invocation-record.js";
import { ioRecordNames, readIoRecord } from "./io-records.js";
import { partsOf, readRequestParts, rebuildRequest } from "./request-parts.js";
import type { RunPaths } from "./run-dir.js";

export interface RecordedRequest {
  /** The record the request came from. */
  file: string;
  iteration: number;
  request: LlmRequest;
}

/**
 * A run's invocation records, file and iteration, in the order the calls were made: each record read and validated once
 * and none kept, so a replay or `show --request` reads the one it needs with readInvocationRecord.
 */
export function indexInvocationRecords(paths: Pick<RunPaths, "invocationsDir">): { file: string; iteration: number }[] {
  const entries = ioRecordNames(paths.invocationsDir, refuseRecord).map((name) => {
    const file = join(paths.invocationsDir, name);
    const { iteration, timestamp } = readInvocationRecord(file);
    return { file, name, record: { iteration, timestamp } };
  });
  return inCallOrder(entries).map(({ file, record }) => ({ file, iteration: record.iteration }));
}

/** One invocation record, validated. */
export function readInvocationRecord(file: string): InvocationRecord {
  const read = readIoRecord(file, InvocationRecordSchema);
  return "problem" in read ? refuseRecord(file, read.problem) : keptAsWritten(read.data, read.raw);
}

function refuseRecord(file: string, problem: string): never {
  throw new JournalError(`${file}: not a valid invocation record (${problem}).`);
}

/** Validated, but the request kept as written: the schema's output would put each message's fields in the schema's order. */
function keptAsWritten(data: InvocationRecord, raw: unknown): InvocationRecord {
  const request = (raw as { request?: LlmRequest }).request;
  return request === undefined ? data : { ...data, request };
}

/** Iteration orders the calls; timestamp and file name only break ties. */
function inCallOrder<T extends { name: string; record: Pick<InvocationRecord, "iteration" | "timestamp"> }>(records: T[]): T[] {
  return records.sort((a, b) => a.record.iteration - b.record.iteration || a.record.timestamp.localeCompare(b.record.timestamp) || a.name.localeCompare(b.name));
}

/** The requests of the given records, rebuilt: request-parts.jsonl is read once, keeping only the parts they use (and the journal once when a part points there). */
export function rebuildRequests(paths: Pick<RunPaths, "invocationsDir" | "journal">, records: { file: string; record: InvocationRecord }[]): RecordedRequest[] {
  const wanted = new Set<number>();
  for (const { record } of records) if (record.request_parts) for (const n of partsOf(record.request_parts)) wanted.add(n);
  const parts = wanted.size > 0 ? readRequestParts(paths, wanted) : new Map();
  return records.map(({ file, record }) => ({
    file,
    iteration: record.iteration,
    request: record.request ?? rebuildRequest(record.request_parts!, parts, file),
  }));
}

/** A run's model calls as a replay or a comparison reads them: how many, and each one's iteration, request and reply when asked. */
interface RecordedCalls {
  count: number;
  iteration(index: number): number;
  /** The reply of call `index` (0-based, call order), its record read now. */
  reply(index: number): InvocationRecord["reply"];
  /** The request of call `index`, rebuilt: request-parts.jsonl is read whole on the first call that needs it. */
  request(index: number): LlmRequest;
}

/**
 * The run's invocation records in call order, read one at a time when asked. The parts are read once and kept: each
 * distinct message once, so memory grows with the run's journal, not with the square of its requests.
 */
export function openRecordedCalls(paths: Pick<RunPaths, "invocationsDir" | "journal">): RecordedCalls {
  const records = indexInvocationRecords(paths);
  let parts: Map<number, ChatMessage | FunctionTool[]> | null = null;
  return {
    count: records.length,
    iteration: (index) => records[index]!.iteration,
    reply: (index) => readInvocationRecord(records[index]!.file).reply,
    request(index) {
      const { file } = records[index]!;
      const record = readInvocationRecord(file);
      if (record.request !== undefined) return record.request;
      parts ??= readRequestParts(paths);
      return rebuildRequest(record.request_parts!, parts, file);
    },
  };
}

/** What differs on every run, as the run's first ENGINE_START journaled it (a fork's source's id too): what its requests are normalized by. */
export function recordedRunFacts(paths: Pick<RunPaths, "journal">): RunFacts {
  const start = readFirstEvent(paths.journal);
  if (start?.type !== "ENGINE_START") throw new JournalError(`${paths.journal} does not begin with ENGINE_START: not a run's journal.`);
  return { runIds: start.forked_from === undefined ? [start.run_id] : [start.run_id, start.forked_from.run_id], workDir: start.work_dir, agentHome: start.agent_home };
}
