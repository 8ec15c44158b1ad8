// `delta fork`: a new run from another's journal through iteration N — whole iterations, renumbered, through the one journal writer with a fresh hash chain, their io records copied and repointed — resumable with `continue -m`; the source only read.
import { statSync } from "node:fs";
import { hostname } from "node:os";
import { basename } from "node:path";
import { replyEnding } from "../conversation.js";
import { EngineError, JournalError, RunRefusedError, UsageError } from "../errors.js";
import type { EventOf, JournalEvent, NewEvent, RunStatus } from "../journal/events.js";
import { streamJournal } from "../journal/reader.js";
import { compareRequests } from "../llm/request-equality.js";
import { runSecrets } from "../secrets.js";
import { copyIoRecords } from "../store/fork-io.js";
import { createFirstOwner, holdNewRun } from "../store/lease/take-run.js";
import { openRecordedCalls, recordedRunFacts } from "../store/recorded-requests.js";
import { stageNewRunDir, stageRunDir, type RunPaths } from "../store/run-dir.js";
import { openRunFiles, type WritableRunFiles } from "../store/run-files.js";
import type { RunId } from "../store/run-id.js";
import { rememberRun } from "../store/run-index.js";
import { holderFacts } from "../store/run-metadata.js";
import { removeCreatedWorkspace, resolveWorkspace } from "../store/workspace.js";
import { ENGINE_VERSION } from "../engine-version.js";
import { newRunTrace, parseTraceParent } from "../trace/trace-ids.js";

interface ForkRequest {
  source: { runId: string; paths: RunPaths };
  /** The last iteration the fork keeps (from 1). */
  at: number;
  /** --run-id: the fork's id; a new one is made without it. */
  runId?: RunId;
  /** -w: the fork's workspace (made when missing); without it, the source's. */
  workDir?: string;
  warn: (line: string) => void;
}

/** Where the fork came from, as its ENGINE_START journals it. */
interface ForkedFrom {
  run_id: string;
  iteration: number;
  /** The seq, in the source's journal, of the last event the fork copied. */
  seq: number;
  /** That event's hash in the source's chain; null when the source's journal is unchained (an older engine wrote it). */
  hash: string | null;
}

interface ForkOutcome {
  runId: string;
  workDir: string;
  runDir: string;
  status: RunStatus;
  iterations: number;
  forkedFrom: ForkedFrom;
  /** The fork works in the source's own workspace, as it is now. */
  sharesWorkspace: boolean;
  copied: { events: number; invocations: number; toolExecutions: number; hooks: number };
}

/** Events a fork leaves behind: each process's start and end and its errors belong to the source's invocations, not to the conversation. */
const PROCESS_EVENTS = new Set<JournalEvent["type"]>(["ENGINE_START", "ENGINE_END", "ERROR"]);

export async function forkRun(request: ForkRequest): Promise<ForkOutcome> {
  if (!Number.isInteger(request.at) || request.at < 1) throw new UsageError(`--at takes the iteration the fork ends with (1, 2, …), got ${request.at}.`);
  const cut = findCut(request.source, request.at);
  const workspace = await resolveWorkspace({ agentHome: cut.start.agent_home, workDir: request.workDir ?? cut.start.work_dir, yes: true, isTTY: false });
  let staged;
  try {
    staged = request.runId === undefined ? stageNewRunDir(workspace.workDir) : stageRunDir(workspace.workDir, request.runId);
  } catch (err) {
    removeCreatedWorkspace(workspace);
    throw err;
  }
  const runId = staged.runId;
  let files: WritableRunFiles | null = null;
  try {
    const owner = createFirstOwner(staged.paths);
    files = await openRunFiles(staged.paths, { warn: request.warn }).startWriting({ secrets: runSecrets([]), warn: request.warn, requestRecords: "parts" });
    const written = writeJournal(files, request.source, cut, runId, workspace.workDir);
    const copied = copyIoRecords(request.source.paths, staged.paths, { throughIteration: request.at, seqOf: written.seqOf, hookRecords: written.hookRecords });
    files.writeMetadata({
      run_id: runId,
      workspace_id: basename(workspace.workDir),
      agent_name: typeof cut.config.agent_name === "string" ? cut.config.agent_name : "",
      status: written.status,
      created_at: written.startedAt,
      updated_at: written.endedAt,
      end_time: written.endedAt,
      initial_message: written.task,
      task: written.task,
      ...(typeof cut.config.model === "string" ? { model: cut.config.model } : {}),
      iterations: request.at,
      max_iterations: typeof cut.config.max_iterations === "number" && cut.config.max_iterations > 0 ? cut.config.max_iterations : 30,
      error: null,
      agent_home: cut.start.agent_home,
      work_dir: workspace.workDir,
      ...holderFacts(Date.now()),
      // Where the fork's journal ends: list-runs reads no journal of a run at rest, and `delta verify` finds a tail cut off.
      journal_bytes: statSync(staged.paths.journal).size,
      journal_hash: files.journal.head(),
    }, { durable: true });
    checkCopiedRequests(request.source, staged.paths, runId, workspace.workDir);
    const published = staged.publish();
    files.published(published);
    // Published held by this process, and let go at once: the fork is at rest, as a run whose engine ended.
    holdNewRun(published, owner).release();
    rememberRun({ runId, workDir: workspace.workDir });
    return {
      runId,
      workDir: workspace.workDir,
      runDir: published.runDir,
      status: written.status,
      iterations: request.at,
      forkedFrom: written.forkedFrom,
      sharesWorkspace: workspace.workDir === cut.start.work_dir,
      copied: { events: written.seqOf.size, ...copied },
    };
  } catch (err) {
    staged.discard();
    removeCreatedWorkspace(workspace);
    throw err;
  } finally {
    files?.close();
  }
}

/** Where the fork ends in the source's journal, found on one streamed pass that keeps no event but the few it names. */
interface Cut {
  /** The source's first ENGINE_START: its agent and workspace. */
  start: EventOf<"ENGINE_START">;
  /** The config of the last ENGINE_START before the cut: the settings the source ran iteration N with. */
  config: Record<string, unknown>;
  /** The last event of iteration N (or before it): the fork copies up to it. */
  lastSeq: number;
  lastHash: string | null;
  /** Iteration N's reply. */
  thought: EventOf<"THOUGHT">;
}

function findCut(source: ForkRequest["source"], at: number): Cut {
  let start: EventOf<"ENGINE_START"> | null = null;
  let config: Record<string, unknown> = {};
  let last: JournalEvent | null = null;
  let thought: EventOf<"THOUGHT"> | null = null;
  let lastIteration = 0;
  let beyond = false;
  const answered = new Set<string>();
  streamJournal(source.paths.journal, (event) => {
    if (beyond) return;
    const iteration = "iteration" in event ? event.iteration : null;
    if (iteration !== null && iteration > at) {
      beyond = true;
      return;
    }
    if (event.type === "ENGINE_START") {
      start ??= event;
      config = event.config;
    }
    if (event.type === "THOUGHT") {
      lastIteration = event.iteration;
      if (event.iteration === at) {
        thought = event;
        answered.clear();
      }
    }
    if (event.type === "ACTION_RESULT" && event.iteration === at) answered.add(event.action_id);
    if (iteration !== null) last = event;
  });
  if (start === null) throw new RunRefusedError(`${source.paths.journal} does not begin with ENGINE_START: run ${source.runId} cannot be forked.`);
  const reply = thought as EventOf<"THOUGHT"> | null;
  if (reply === null) {
    throw new RunRefusedError(`Run ${source.runId} has no iteration ${at} to fork at: ${lastIteration === 0 ? "its model was never answered" : `its iterations are 1 to ${lastIteration}`}.`);
  }
  const unanswered = reply.tool_calls.filter((call) => !answered.has(call.id));
  if (unanswered.length > 0) {
    throw new RunRefusedError(
      `Iteration ${at} of run ${source.runId} is not whole: its call ${unanswered.map((call) => `${call.name} (${call.id})`).join(", ")} has no result in the journal. ` +
        `Fork at iteration ${at - 1 > 0 ? at - 1 : "1 once it is whole"}, or continue the run first.`,
    );
  }
  const end = last as JournalEvent | null;
  return { start, config, lastSeq: end!.seq, lastHash: hashOf(end!), thought: reply };
}

/** The hash an engine with a chained journal wrote on the event; null for an unchained one. */
function hashOf(event: JournalEvent): string | null {
  const hash = (event as { hash?: unknown }).hash;
  return typeof hash === "string" ? hash : null;
}

/**
 * The fork's journal, through its one writer: its own ENGINE_START (naming where it came from), the source's events of
 * iterations 1 to N renumbered (the messages between them too; not the source's process starts, ends and errors), and
 * an ENGINE_END: COMPLETED when iteration N answered, else INTERRUPTED, both resumable with `continue -m`.
 */
function writeJournal(files: WritableRunFiles, source: ForkRequest["source"], cut: Cut, runId: string, workDir: string) {
  const forkedFrom: ForkedFrom = { run_id: source.runId, iteration: cut.thought.iteration, seq: cut.lastSeq, hash: cut.lastHash };
  const { journal } = files;
  const started = journal.append({
    type: "ENGINE_START",
    run_id: runId,
    agent_home: cut.start.agent_home,
    work_dir: workDir,
    config: { ...cut.config, pid: process.pid, hostname: hostname() },
    engine_version: ENGINE_VERSION,
    ...newRunTrace(parseTraceParent(process.env.TRACEPARENT)),
    forked_from: forkedFrom,
  });
  const seqOf = new Map<number, number>();
  const hookRecords = new Set<string>();
  let task: string | null = null;
  streamJournal(source.paths.journal, (event) => {
    if (event.seq > cut.lastSeq || PROCESS_EVENTS.has(event.type)) return;
    const { seq: _seq, timestamp: _timestamp, hash: _hash, ...rest } = event as JournalEvent & { hash?: string };
    // A call run again names its earlier request by seq: that request is of the same iteration, copied before it.
    if (rest.type === "ACTION_REQUEST" && rest.rerun_of !== undefined) {
      const earlier = seqOf.get(rest.rerun_of);
      if (earlier === undefined) throw new JournalError(`${source.paths.journal}: the ACTION_REQUEST at seq ${event.seq} runs again the request at seq ${rest.rerun_of}, which is not an earlier request of its iteration; run ${source.runId} cannot be forked there.`);
      rest.rerun_of = earlier;
    }
    const copied = journal.append(rest as NewEvent);
    seqOf.set(event.seq, copied.seq);
    if (event.type === "USER_MESSAGE") task ??= event.content;
    if (event.type === "HOOK_RESULT") hookRecords.add(hookRecordName(event, source.paths.journal));
  });
  const answered = cut.thought.tool_calls.length === 0 && replyEnding(cut.thought.finish_reason) === "finished";
  const status: RunStatus = answered ? "COMPLETED" : "INTERRUPTED";
  const ended = journal.append({ type: "ENGINE_END", run_id: runId, status, final_iteration: cut.thought.iteration });
  journal.sync();
  if (task === null) throw new EngineError(`Run ${source.runId} has no USER_MESSAGE before iteration ${cut.thought.iteration}; it cannot be forked.`);
  return { forkedFrom, seqOf, hookRecords, status, task: task as string, startedAt: started.timestamp, endedAt: ended.timestamp };
}

/** The engine names a hook's record `io/hooks/<file>.json`; a journal naming any other path was not written so, and is not followed. */
const HOOK_RECORD = /^io\/hooks\/([^/\\]+\.json)$/;

function hookRecordName(event: EventOf<"HOOK_RESULT">, journal: string): string {
  const name = HOOK_RECORD.exec(event.record)?.[1];
  if (name === undefined) {
    throw new JournalError(`${journal}: the HOOK_RESULT at seq ${event.seq} names the record ${JSON.stringify(event.record)}, which is not a file of io/hooks/; the journal was changed after the engine wrote it, and the run cannot be forked.`);
  }
  return name;
}

/**
 * Every request the fork's records give back must equal the source's (its run id, workspace and call ids normalized):
 * a repointed part that rebuilt differently would make a later replay or diff of the fork lie. Checked before publishing.
 */
function checkCopiedRequests(source: ForkRequest["source"], fork: RunPaths, runId: string, workDir: string): void {
  const sourceFacts = recordedRunFacts(source.paths);
  const forkFacts = { ...sourceFacts, runIds: [runId, source.runId], workDir };
  const before = openRecordedCalls(source.paths);
  const after = openRecordedCalls(fork);
  for (let index = 0; index < after.count; index += 1) {
    const parts = compareRequests({ request: before.request(index), facts: sourceFacts }, { request: after.request(index), facts: forkFacts });
    if (parts.length > 0) throw new EngineError(`Engine bug: the fork's request of iteration ${after.iteration(index)} does not rebuild as the source's (${parts.map((part) => part.summary).join("; ")}); nothing was forked.`);
  }
}
