// Every invocation record of a run with its file name, in call order, held together: for tests comparing a whole run's requests (the engine reads one record at a time).
import { indexInvocationRecords, readInvocationRecord } from "../../src/store/recorded-requests.js";
import type { InvocationRecord } from "../../src/store/invocation-record.js";
import type { RunPaths } from "../../src/store/run-dir.js";

export function readInvocationRecords(paths: Pick<RunPaths, "invocationsDir">): { file: string; record: InvocationRecord }[] {
  return indexInvocationRecords(paths).map(({ file }) => ({ file, record: readInvocationRecord(file) }));
}
