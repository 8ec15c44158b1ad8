// metadata.json: the run's status and process facts, a cache of the journal that is replaced atomically.
import { hostname } from "node:os";
import { readRunFile } from "../safe-open.js";
import { basename } from "node:path";
import { z } from "zod";
import { EngineError, RunFileError, RunRefusedError, errorMessage } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { DeferredSchema, RunStatusSchema } from "../journal/events.js";
import type { Landmarks } from "../journal/landmarks.js";
import type { RunState } from "../journal/run-state.js";
import { thisHost } from "../process/host-probe.js";
import type { OwnerRecord } from "./lease/owner-record.js";
import { PRIVATE_FILE_MODE } from "../private-modes.js";
import { redactedJson } from "../secrets.js";
import { writeFileAtomic } from "./atomic-file.js";
import type { RunPaths } from "./run-dir.js";

export const RunMetadataSchema = z.object({
  run_id: z.string(),
  workspace_id: z.string(),
  agent_name: z.string(),
  status: RunStatusSchema,
  created_at: z.string(),
  updated_at: z.string(),
  end_time: z.string().nullable(),
  initial_message: z.string(),
  /** The original Delta Engine's name for the first message, kept beside initial_message for its tools. */
  task: z.string().optional(),
  /** The model this run's latest invocation asked (--model, DELTA_MODEL or llm.model). */
  model: z.string().optional(),
  iterations: z.number().int().nonnegative(),
  max_iterations: z.number().int().positive(),
  error: z.string().nullable(),
  /** With status DEFERRED: what the run waits for and when it may go on, as its ENGINE_END says. */
  deferred: DeferredSchema.nullable().optional(),
  agent_home: z.string(),
  work_dir: z.string(),
  pid: z.number().int().positive(),
  hostname: z.string(),
  /** The holder's machine, boot and PID namespace (absent in runs written before hosts were told apart by them). */
  machine_id: z.string().nullable().optional(),
  boot_id: z.string().nullable().optional(),
  pid_namespace: z.string().nullable().optional(),
  start_time_unix: z.number().int().nonnegative(),
  process_name: z.string(),
  /** The run's token totals and cost when it last ended (absent in older runs and while the first process runs). */
  usage: z
    .object({
      input_tokens: z.number().int().nonnegative(),
      cached_input_tokens: z.number().int().nonnegative(),
      /** Absent in runs that ended before cache writes were counted. */
      cache_write_input_tokens: z.number().int().nonnegative().optional(),
      output_tokens: z.number().int().nonnegative(),
      reasoning_tokens: z.number().int().nonnegative(),
      total_cost_usd: z.number().nonnegative().nullable(),
    })
    .optional(),
  /**
   * The journal's size when the run's end was written here: while the journal still has that size,
   * the status, iterations and first message above are the journal's own, and listing the run reads no journal.
   */
  journal_bytes: z.number().int().nonnegative().optional(),
  /** The hash of the journal's last line when its size was written here: `delta verify` finds a tail cut off by it. */
  journal_hash: z.string().regex(/^sha256:[0-9a-f]{64}$/).optional(),
  /** The holder's stdio MCP servers, each the leader of its own process group, so a later holder can stop what a crash left behind. */
  mcp_server_processes: z.array(z.object({ server: z.string(), pid: z.number().int().positive(), start_time_unix: z.number().nonnegative() })).optional(),
});
export type RunMetadata = z.infer<typeof RunMetadataSchema>;
export type ServerProcessRecord = NonNullable<RunMetadata["mcp_server_processes"]>[number];

/** The facts about this process that let another one judge whether it still holds the run. */
export function holderFacts(startedAtUnix: number): Pick<RunMetadata, "pid" | "hostname" | "machine_id" | "boot_id" | "pid_namespace" | "start_time_unix" | "process_name"> {
  return { pid: process.pid, hostname: hostname(), ...thisHost(), start_time_unix: startedAtUnix, process_name: process.title || "node" };
}

interface WriteMetadataOptions {
  /** fsync too: for terminal states, which must survive a power cut. */
  durable?: boolean;
  /** Strings that must never reach the file (the API key), e.g. repeated in the first message. */
  secrets?: readonly string[];
}

export function writeMetadata(paths: RunPaths, metadata: RunMetadata, options: WriteMetadataOptions = {}): void {
  const checked = RunMetadataSchema.safeParse(metadata);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new EngineError(`Engine bug: refusing to write invalid ${paths.metadata} (${issue?.path.join(".")}: ${issue?.message})`);
  }
  try {
    writeFileAtomic(paths.metadata, `${redactedJson(checked.data, options.secrets ?? [], 2)}\n`, { ...options, mode: PRIVATE_FILE_MODE });
  } catch (err) {
    throw fsError(`Cannot write ${paths.metadata}`, err);
  }
}

export function readMetadata(paths: RunPaths): RunMetadata {
  let text: string;
  try {
    text = readRunFile(paths.metadata);
  } catch (err) {
    if (err instanceof RunFileError) throw err;
    throw new RunRefusedError(
      `Cannot read ${paths.metadata} (${errorMessage(err)}); the run may have been stopped before it started, or its files were moved`,
      { cause: err },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RunRefusedError(`${paths.metadata} is not valid JSON (${errorMessage(err)}); it is written by the engine only, do not edit it`);
  }
  const result = RunMetadataSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = issue && issue.path.length > 0 ? issue.path.map(String).join(".") : "(root)";
    throw new RunRefusedError(`${paths.metadata}: field "${field}": ${issue?.message ?? "invalid"}; it is written by the engine only, do not edit it`);
  }
  return result.data;
}

/**
 * metadata.json as read, or, when it is lost or garbled, rebuilt from the journal (the run's truth) and the last
 * owner record, with a warning: it is only a cache, so it never stops a run from being continued.
 */
export function readOrRebuildMetadata(paths: RunPaths, marks: Landmarks, state: RunState, lastOwner: OwnerRecord | null, warn: (line: string) => void): RunMetadata {
  try {
    return readMetadata(paths);
  } catch (err) {
    if (!(err instanceof RunRefusedError)) throw err;
    const rebuilt = metadataFromJournal(marks, state, lastOwner);
    if (rebuilt === null) throw err;
    warn(`[warning] ${err.message}. Rebuilt it from the journal, which is the run's truth; it is rewritten as the run goes on.`);
    return rebuilt;
  }
}

/** What metadata.json says when it agrees with the journal (and `state`, the run state folded from it); null for a journal with no ENGINE_START. */
function metadataFromJournal(marks: Landmarks, state: RunState, lastOwner: OwnerRecord | null): RunMetadata | null {
  const start = marks.first;
  if (start?.type !== "ENGINE_START") return null;
  const last = marks.last ?? start;
  const { config } = start;
  const lastEnd = marks.lastEnd;
  return {
    run_id: start.run_id,
    workspace_id: basename(start.work_dir),
    agent_name: config.agent_name ?? "",
    status: state.status,
    created_at: start.timestamp,
    updated_at: last.timestamp,
    end_time: state.status === "RUNNING" || state.status === "WAITING_FOR_INPUT" ? null : lastEnd?.timestamp ?? null,
    initial_message: state.initialMessage ?? "",
    iterations: state.iterations,
    max_iterations: config.max_iterations ?? 1,
    error: state.lastError && (state.status === "FAILED" || state.status === "INTERRUPTED") ? `${state.lastError.error_type}: ${state.lastError.error_message}` : null,
    deferred: state.deferred,
    agent_home: start.agent_home,
    work_dir: start.work_dir,
    pid: lastOwner?.pid ?? process.pid,
    hostname: lastOwner?.hostname ?? hostname(),
    ...(lastOwner ? { machine_id: lastOwner.machine_id, boot_id: lastOwner.boot_id, pid_namespace: lastOwner.pid_namespace } : thisHost()),
    start_time_unix: Math.floor(lastOwner?.acquired_at_unix ?? Date.parse(start.timestamp)),
    process_name: "node",
  };
}
