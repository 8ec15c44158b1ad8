// The requests a run sent, rebuilt from its io/invocations/ records: whole ones as written, content-addressed ones from request-parts.jsonl.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { LlmRequest } from "../conversation.js";
import { JournalError, errorMessage } from "../errors.js";
import { partsOf, readRequestParts, rebuildRequest, requestPartsPath } from "../store/request-parts.js";
import type { RunPaths } from "../store/run-dir.js";
import { InvocationRecordSchema, type InvocationRecord } from "./invocation-record.js";

export interface RecordedRequest {
  /** The record the request came from. */
  file: string;
  iteration: number;
  request: LlmRequest;
}

/** The invocation records of a run with their file names, in the order the calls were made. */
export function readInvocationRecords(paths: Pick<RunPaths, "invocationsDir">): { file: string; record: InvocationRecord }[] {
  let names: string[];
  try {
    names = readdirSync(paths.invocationsDir).filter((name) => name.endsWith(".json"));
  } catch (err) {
    throw new JournalError(`Cannot read ${paths.invocationsDir}: ${errorMessage(err)}`, { cause: err });
  }
  const records = names.map((name) => {
    const file = join(paths.invocationsDir, name);
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, "utf8"));
    } catch (err) {
      throw new JournalError(`${file}: not readable JSON (${errorMessage(err)})`);
    }
    const parsed = InvocationRecordSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new JournalError(`${file}: not a valid invocation record (${issue ? `field ${issue.path.join(".") || "(root)"}: ${issue.message}` : "unreadable"}).`);
    }
    // Validated, but kept as written: the schema's output would put each message's fields in the schema's order.
    const request = (raw as { request?: LlmRequest }).request;
    return { file, name, record: request === undefined ? parsed.data : { ...parsed.data, request } };
  });
  // Iteration orders the calls; timestamp and file name only break ties.
  records.sort((a, b) => a.record.iteration - b.record.iteration || a.record.timestamp.localeCompare(b.record.timestamp) || a.name.localeCompare(b.name));
  return records.map(({ file, record }) => ({ file, record }));
}

/** The requests of the given records, rebuilt: request-parts.jsonl is read once, keeping only the parts they use. */
export function rebuildRequests(paths: Pick<RunPaths, "invocationsDir">, records: { file: string; record: InvocationRecord }[]): RecordedRequest[] {
  const wanted = new Set<number>();
  for (const { record } of records) if (record.request_parts) for (const n of partsOf(record.request_parts)) wanted.add(n);
  const parts = wanted.size > 0 ? readRequestParts(requestPartsPath(paths), wanted) : new Map();
  return records.map(({ file, record }) => ({
    file,
    iteration: record.iteration,
    request: record.request ?? rebuildRequest(record.request_parts!, parts, file),
  }));
}
