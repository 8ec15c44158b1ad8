// The run's audit trail beside the journal: io/ records of LLM calls, tools and hooks, and engine.log.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { fsError } from "../fs-errors.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../private-modes.js";
import type { LlmRequest } from "../conversation.js";
import { redactText, redactedJson } from "../secrets.js";
import type { InvocationRecord } from "./invocation-record.js";
import { makeDirs } from "./make-dirs.js";
import { openRequestParts, type RenderedFrom } from "./request-parts.js";
import type { RunPaths } from "./run-dir.js";

/** A record the caller builds; stored as pretty-printed JSON. */
export type IoRecord = Record<string, unknown>;

/** One model exchange: its record with the whole request, which the log may store as parts pointing into the journal where `renderedFrom` says a message came from. */
type Invocation = Omit<InvocationRecord, "request" | "request_parts"> & { request: LlmRequest; renderedFrom?: RenderedFrom | undefined };

/** How io/invocations/ keeps requests: `parts` stores each distinct message and tool list once; `full` writes each request whole. */
export type RequestRecords = "parts" | "full";

export interface InvocationLog {
  /** Writes the exchange's record and returns its path. */
  write(invocation: Invocation): string;
  close(): void;
}

/** The log of one process's model calls; io/'s folders are made again first when they are gone (`delta prune --io-only`). */
export function createInvocationLog(paths: RunPaths, mode: RequestRecords, secrets: readonly string[] = []): InvocationLog {
  for (const dir of [paths.invocationsDir, paths.toolExecutionsDir, paths.hooksDir]) {
    try {
      mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    } catch (err) {
      throw fsError(`Cannot create ${dir}`, err);
    }
  }
  const parts = mode === "parts" ? openRequestParts(paths, secrets) : null;
  return {
    write({ iteration, timestamp, request, reply, duration_ms, renderedFrom }: Invocation): string {
      const name = `${fileTimestamp()}_${String(iteration).padStart(4, "0")}`;
      // The parts are on disk before the record that refers to them.
      const stored = parts ? { request_parts: parts.store(request, renderedFrom) } : { request };
      return writeRecord(paths.invocationsDir, name, { iteration, timestamp, ...stored, reply, duration_ms }, secrets);
    },
    close(): void {
      parts?.close();
    },
  };
}

export function writeToolExecution(paths: RunPaths, record: IoRecord & { tool_name: string }, secrets: readonly string[] = []): string {
  return writeRecord(paths.toolExecutionsDir, `${fileTimestamp()}_${safeName(record.tool_name)}`, record, secrets);
}

/** A model request queued for a batch (llm.batch): `io/batch/<custom id>.json`, its path returned relative to the run directory. The custom id is the file's whole name. */
export function writeBatchRequest(paths: RunPaths, record: IoRecord & { custom_id: string }, secrets: readonly string[] = []): string {
  const dir = join(paths.runDir, "io", "batch");
  makeDirs(dir);
  const path = join(dir, `${record.custom_id}.json`);
  try {
    writeFileSync(path, `${redactedJson(record, secrets, 2)}\n`, { flag: "wx", mode: PRIVATE_FILE_MODE });
  } catch (err) {
    throw fsError(`Cannot write ${path}`, err);
  }
  return `io/batch/${record.custom_id}.json`;
}

export function writeHookRecord(paths: RunPaths, hookName: string, record: IoRecord, secrets: readonly string[] = []): string {
  return writeRecord(paths.hooksDir, `${safeName(hookName)}_${fileTimestamp()}`, record, secrets);
}

/** `20251013T143522123Z`: sortable and legal in every file system. */
function fileTimestamp(now: Date = new Date()): string {
  return now.toISOString().replace(/[-:.]/g, "");
}

/** Keeps a tool or hook name readable in a file name without letting it escape the directory. */
function safeName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
  return cleaned === "" ? "unnamed" : cleaned;
}

/** Exclusive creation, with a numeric suffix when the same millisecond already has a file of that name. */
function writeRecord(dir: string, baseName: string, record: IoRecord, secrets: readonly string[]): string {
  const content = `${redactedJson(record, secrets, 2)}\n`;
  let remade = false;
  for (let suffix = 0; ; suffix += 1) {
    const path = join(dir, suffix === 0 ? `${baseName}.json` : `${baseName}_${suffix}.json`);
    try {
      writeFileSync(path, content, { flag: "wx", mode: PRIVATE_FILE_MODE });
      return path;
    } catch (err) {
      // A folder someone removed (io/ pruned by hand) is made again: the journal, not io/, is the run.
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && suffix === 0 && !remade) {
        remade = true;
        suffix -= 1;
        makeDirs(dir);
        continue;
      }
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || suffix >= 999) {
        throw fsError(`Cannot write ${path}`, err);
      }
    }
  }
}

export interface EngineLogger {
  log(line: string): void;
  close(): void;
}

/** Keeps engine.log open for the run; logging is best effort, since a lost log line must not fail a run. */
export function createEngineLogger(paths: RunPaths, secrets: readonly string[] = []): EngineLogger {
  let fd: number | null = null;
  try {
    fd = openSync(paths.engineLog, "a", PRIVATE_FILE_MODE);
  } catch {
    fd = null;
  }
  return {
    log(line: string): void {
      if (fd === null) return;
      try {
        writeSync(fd, logLine(redactText(line, secrets)));
      } catch {
        // See above: the journal, not this log, reports disk failures.
      }
    },
    close(): void {
      if (fd === null) return;
      closeSync(fd);
      fd = null;
    },
  };
}

function logLine(line: string): string {
  return `${new Date().toISOString()} ${line.replace(/\n/g, "\n  ")}\n`;
}
