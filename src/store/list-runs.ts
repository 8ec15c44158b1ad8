// Finds the runs of a workspace, with status taken from each journal (metadata is only a cache).
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Deferred, RunStatus } from "../journal/events.js";
import { errorMessage } from "../errors.js";
import { assessOwner } from "./lease/judge.js";
import { readRunState } from "../journal/run-state.js";
import { readMetadata, RunMetadataSchema } from "./run-metadata.js";
import { originalRunOf, type OriginalRun } from "./original-run.js";
import { readRunFile } from "../safe-open.js";
import { isLeftover, runPaths, type RunPaths } from "./run-dir.js";
import { isRunId, type RunId } from "./run-id.js";
import type { RecordReading } from "./lease/owner-record.js";
import { readCurrentOwner } from "./lease/take-run.js";

export interface RunSummary {
  run_id: RunId;
  /** The workspace holding the run: what `delta continue -w` takes. */
  work_dir: string;
  status: RunStatus;
  task_summary: string;
  last_updated: string;
  created_at: string | null;
  iterations: number;
  agent_name: string | null;
  /** RUNNING in the journal, but its engine process is gone: `delta continue` will recover it. */
  orphaned: boolean;
  /** Who holds a RUNNING run, and what is known of it; null for a run in any other state. */
  holder: HolderSummary | null;
  /** Made by the original Delta Engine: listed from its metadata.json, not continued by this engine. */
  original_engine: boolean;
  /** With status DEFERRED: what the run waits for, and from when (`resume_after`, null when unknown) `continue --due` takes it. */
  deferred: Deferred | null;
}

/**
 * alive: proven running here, or its heartbeat moved. dead: proven gone here, released, or no heartbeat for a stale
 * period. unchecked: on another host (or in another container), not yet watched (`--check-liveness` watches it).
 */
export interface HolderSummary {
  state: "alive" | "dead" | "unchecked";
  pid: number | null;
  hostname: string | null;
  detail: string;
}

/** Unfinished runs at rest; a COMPLETED run takes a new message, but is not unfinished work. */
const RESUMABLE: readonly RunStatus[] = ["INTERRUPTED", "WAITING_FOR_INPUT", "FAILED", "DEFERRED"];

export interface ListFilter {
  resumable?: boolean;
  /** Only DEFERRED runs whose time has come (or is unknown) at this moment (epoch ms). */
  dueAt?: number;
  status?: RunStatus;
  first?: boolean;
}

/** Runs in `<workDir>/.delta`, newest first; unreadable runs are reported through warn and skipped. */
export function listRuns(workDir: string, filter: ListFilter, warn: (line: string) => void): RunSummary[] {
  const runs: RunSummary[] = [];
  for (const name of runIdsIn(workDir)) {
    const summary = summarize(workDir, name, warn);
    if (summary) runs.push(summary);
  }
  return applyFilter(runs, filter);
}

/** The run directories of `<workDir>/.delta`, unordered; none when there is no .delta. */
export function runIdsIn(workDir: string): RunId[] {
  // A directory with neither journal nor metadata is not a run: a claim that died before its first
  // write, or something else kept in .delta/ (context_artifacts/ of a computed_file source).
  return foldersIn(workDir).filter((name): name is RunId => isRunId(name) && isRunDir(join(workDir, ".delta", name)));
}

/** The run folders of `<workDir>/.delta` that hold owner records and nothing else of a run (run-dir.ts isLeftover). */
export function leftoverIdsIn(workDir: string): RunId[] {
  return foldersIn(workDir).filter((name): name is RunId => isRunId(name) && isLeftover(runPaths(workDir, name)));
}

/** The folders of `<workDir>/.delta` but the hidden ones (a .claim-* directory a crash left mid-claim is not a run). */
function foldersIn(workDir: string): string[] {
  try {
    return readdirSync(join(workDir, ".delta"), { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.name.startsWith(".")).map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** Newest first (last update, then run id), filtered; also merges the runs of several workspaces. */
export function applyFilter(runs: RunSummary[], filter: ListFilter): RunSummary[] {
  const sorted = [...runs].sort((a, b) => b.last_updated.localeCompare(a.last_updated) || b.run_id.localeCompare(a.run_id));
  const kept = sorted.filter((run) => (!filter.resumable || isResumable(run)) && (!filter.status || run.status === filter.status) && (filter.dueAt === undefined || isDue(run, filter.dueAt)));
  return filter.first ? kept.slice(0, 1) : kept;
}

/** Unfinished work `continue` can take without a message: a run at rest that did not complete, or a RUNNING one whose holder is dead. */
function isResumable(run: RunSummary): boolean {
  return RESUMABLE.includes(run.status) || run.orphaned;
}

/** A DEFERRED run whose resume_after has passed at `now`, or is unknown: `continue --due` takes it. */
function isDue(run: Pick<RunSummary, "status" | "deferred">, now: number): boolean {
  if (run.status !== "DEFERRED") return false;
  const after = run.deferred?.resume_after ?? null;
  if (after === null) return true;
  const at = Date.parse(after);
  return Number.isNaN(at) || at <= now;
}

function isRunDir(dir: string): boolean {
  return existsSync(join(dir, "journal.jsonl")) || existsSync(join(dir, "metadata.json"));
}

function summarize(workDir: string, runId: RunId, warn: (line: string) => void): RunSummary | null {
  const paths = runPaths(workDir, runId);
  // metadata.json read once: an original engine's run, or a run at rest it describes whole, or neither.
  const raw = metadataJson(paths);
  const original = originalRunOf(raw);
  if (original) return summarizeOriginal(workDir, runId, original);
  const ended = endedAsWritten(workDir, runId, raw);
  if (ended !== null) return ended;
  try {
    const state = readRunState(paths.journal, { warn });
    let metadata: ReturnType<typeof readMetadata> | null = null;
    try {
      metadata = readMetadata(paths);
    } catch (err) {
      warn(`run ${runId}: ${errorMessage(err)} (status taken from the journal)`);
    }
    const lastUpdated = metadata?.updated_at ?? statSync(paths.journal).mtime.toISOString();
    return {
      run_id: runId,
      work_dir: workDir,
      status: state.status,
      task_summary: summarizeTask(state.initialMessage ?? metadata?.initial_message ?? ""),
      last_updated: lastUpdated,
      created_at: metadata?.created_at ?? null,
      iterations: state.iterations,
      agent_name: metadata?.agent_name ?? null,
      ...holderOf(state.status === "RUNNING" ? readCurrentOwner(paths) : undefined),
      original_engine: false,
      deferred: state.deferred,
    };
  } catch (err) {
    warn(`run ${runId}: skipped: ${errorMessage(err)}`);
    return null;
  }
}

/**
 * A run at rest whose journal has not changed since its end was written to metadata.json: its
 * status and iterations from there, with no journal read (a workspace of 10,000 runs lists in about a second).
 */
function endedAsWritten(workDir: string, runId: RunId, raw: unknown): RunSummary | null {
  const parsed = RunMetadataSchema.safeParse(raw);
  if (!parsed.success) return null;
  const metadata = parsed.data;
  try {
    if (metadata.status === "RUNNING" || metadata.journal_bytes === undefined || statSync(runPaths(workDir, runId).journal).size !== metadata.journal_bytes) return null;
    return {
      run_id: runId,
      work_dir: workDir,
      status: metadata.status,
      task_summary: summarizeTask(metadata.initial_message),
      last_updated: metadata.updated_at,
      created_at: metadata.created_at,
      iterations: metadata.iterations,
      agent_name: metadata.agent_name,
      orphaned: false,
      holder: null,
      original_engine: false,
      deferred: metadata.status === "DEFERRED" ? (metadata.deferred ?? null) : null,
    };
  } catch {
    // No journal: listing it in full says what is wrong.
    return null;
  }
}

/** metadata.json parsed as JSON, or null when it cannot be read or parsed (the full listing then says why). */
function metadataJson(paths: RunPaths): unknown {
  try {
    return JSON.parse(readRunFile(paths.metadata));
  } catch {
    return null;
  }
}

/** The original engine kept its state in metadata.json, so that is what its runs are listed from. */
function summarizeOriginal(workDir: string, runId: RunId, original: OriginalRun): RunSummary {
  return {
    run_id: runId,
    work_dir: workDir,
    status: original.status,
    task_summary: summarizeTask(original.task),
    last_updated: original.end_time ?? original.start_time,
    created_at: original.start_time,
    iterations: original.iterations_completed ?? 0,
    agent_name: basename(original.agent_ref),
    orphaned: false,
    holder: null,
    original_engine: true,
    deferred: null,
  };
}

/** The holder of a RUNNING run as a reader sees it without waiting (`reading` undefined: the run is not RUNNING). */
function holderOf(reading: RecordReading | null | undefined): Pick<RunSummary, "orphaned" | "holder"> {
  if (reading === undefined) return { orphaned: false, holder: null };
  const owner = reading?.record ?? null;
  const who = { pid: owner?.pid ?? null, hostname: owner?.hostname ?? null };
  const assessed = assessOwner(reading);
  switch (assessed.state) {
    case "dead":
      return { orphaned: true, holder: { state: "dead", ...who, detail: assessed.reason } };
    case "alive":
      return { orphaned: false, holder: { state: "alive", ...who, detail: owner === null ? "its owner record cannot be read" : assessed.stopped ? "stopped (SIGSTOP, Ctrl-Z)" : "running on this host" } };
    case "other-host":
      return { orphaned: false, holder: { state: "unchecked", ...who, detail: `on ${assessed.host}; its heartbeat was not watched` } };
  }
}

function summarizeTask(message: string): string {
  const flat = message.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
