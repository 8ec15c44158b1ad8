// `delta continue`: check the run's state against the state table, repair it if needed, and resume.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadAgent } from "../agent/load.js";
import { preflightAgent } from "../agent/preflight.js";
import { RunRefusedError } from "../errors.js";
import type { EventOf } from "../journal/events.js";
import { readJournal } from "../journal/reader.js";
import { openJournal } from "../journal/writer.js";
import { clearInteraction, recordAnswer } from "./ask-human.js";
import { continueCommand } from "./continue-command.js";
import { assessHolder, checkHolder } from "../store/janitor.js";
import type { RunOutcome } from "./outcome.js";
import { chooseProvider } from "./provider.js";
import { verboseLog, withModel } from "./model-choice.js";
import type { DriveOptions, RunContext } from "./run-context.js";
import { validateRunId } from "../store/run-id.js";
import { deriveRunState, type RunState } from "../journal/run-state.js";
import { runSession } from "./session.js";
import { acquireRunLock, forceBreakRunLock, readLockOwner } from "../store/run-lock.js";
import { findRunDir, type RunPaths } from "../store/run-dir.js";
import { readMetadata, writeMetadata } from "../store/run-metadata.js";

export interface ContinueRequest extends DriveOptions {
  runId: string;
  workDir: string;
  message?: string;
  force: boolean;
}

export async function continueRun(request: ContinueRequest): Promise<RunOutcome> {
  validateRunId(request.runId);
  const paths = findRunDir(request.workDir, request.runId);
  const events = readJournal(paths.journal, { warn: request.warn });
  const before = deriveRunState(events);
  const answer = planAnswer(request, paths, before);
  const start = events.find((event): event is EventOf<"ENGINE_START"> => event.type === "ENGINE_START");
  if (!start) throw new RunRefusedError(`Run ${request.runId} has no ENGINE_START in ${paths.journal}; it cannot be continued.`);
  const loaded = await loadAgent(start.agent_home, { warn: request.warn });
  await preflightAgent(loaded, start.work_dir);
  const provider = await chooseProvider(loaded, start.work_dir, { replay: request.replay, recordedThoughts: before.iterations, warn: request.warn, log: verboseLog(request) });
  const agent = withModel(loaded, request.model ?? provider.model);
  const metadata = readMetadata(paths);

  let janitorNote: string | null = null;
  if (before.status === "RUNNING") {
    const verdict = checkHolder({ run_id: request.runId, pid: metadata.pid, hostname: metadata.hostname, start_time_unix: metadata.start_time_unix }, { force: request.force });
    // Another continue may have taken the lock since metadata.json was written: its own record decides.
    if (verdict.provenDead && lockHolderGone(paths, request.runId) !== false) forceBreakRunLock(paths);
    janitorNote = verdict.reason;
  } else if (existsSync(paths.lock)) {
    // Killed after recording its end but before releasing the lock: a dead holder's lock would refuse us for 10 s.
    const gone = lockHolderGone(paths, request.runId);
    if (gone) {
      forceBreakRunLock(paths);
      request.progress(`[Janitor] Removed the stale lock of run ${request.runId}: ${gone}`);
    }
  }
  const release = await acquireRunLock(paths);
  if (janitorNote !== null) request.progress(`[Janitor] Cleaned up orphaned run: ${janitorNote}`);
  try {
    const current = deriveRunState(readJournal(paths.journal, { warn: request.warn }));
    if (current.status === "RUNNING") await markInterrupted(paths, request.runId, current, metadata, request.warn);
  } catch (err) {
    await release();
    throw err;
  }

  return runSession({
    runId: request.runId,
    workDir: start.work_dir,
    paths,
    agent,
    provider,
    metadata: readMetadata(paths),
    maxIterations: request.maxIterations,
    signal: request.signal,
    progress: request.progress,
    verbose: request.verbose,
    askInteractively: request.askInteractively,
    release,
    opening: (ctx) => open(ctx, paths, before, answer),
  });
}

type Answer = { kind: "text"; text: string } | { kind: "ask" } | { kind: "none" };

/** Refuses (before anything is touched) a continuation the state table does not allow. */
function planAnswer(request: ContinueRequest, paths: RunPaths, state: RunState): Answer {
  const message = request.message;
  switch (state.status) {
    case "WAITING_FOR_INPUT": {
      if (message !== undefined) return { kind: "text", text: message };
      const responseFile = join(paths.interactionDir, "response.txt");
      if (existsSync(responseFile)) return { kind: "text", text: readFileSync(responseFile, "utf8").replace(/\r?\n$/, "") };
      if (request.askInteractively) return { kind: "ask" };
      throw new RunRefusedError(
        `Run ${request.runId} is WAITING_FOR_INPUT: ${state.waiting?.prompt ?? "a question is open"}\n` +
          `Answer with: ${continueCommand(request.runId, request.workDir, "<answer>")}\n` +
          `or write the answer to ${responseFile} and continue without -m.`,
      );
    }
    case "COMPLETED":
      if (message === undefined) {
        throw new RunRefusedError(
          "Run is COMPLETED. To continue, provide a message using -m/--message (or --message-file)\n" +
            `Example: ${continueCommand(request.runId, request.workDir, "Now do something else")}`,
        );
      }
      return { kind: "text", text: message };
    // A failed run is retried as it stands (CONTRACT §4); a message, when given, is appended first.
    case "FAILED":
    case "INTERRUPTED":
    case "RUNNING":
      return message === undefined ? { kind: "none" } : { kind: "text", text: message };
  }
}

/** Records the janitor's RUNNING → INTERRUPTED transition in the journal and metadata. */
async function markInterrupted(paths: RunPaths, runId: string, state: RunState, metadata: ReturnType<typeof readMetadata>, warn: (line: string) => void): Promise<void> {
  const journal = await openJournal(paths.journal, { warn });
  journal.append({
    type: "ERROR",
    error_type: "ORPHANED_RUN",
    error_message: `[Janitor] The engine process (pid ${metadata.pid} on ${metadata.hostname}) stopped without recording an end; run marked INTERRUPTED.`,
  });
  journal.append({ type: "ENGINE_END", run_id: runId, status: "INTERRUPTED", final_iteration: state.iterations });
  journal.sync();
  journal.close();
  writeMetadata(paths, { ...metadata, status: "INTERRUPTED", updated_at: new Date().toISOString() }, { durable: true });
}

async function open(ctx: RunContext, paths: RunPaths, state: RunState, answer: Answer): Promise<void> {
  const waiting = state.status === "WAITING_FOR_INPUT" ? state.waiting : null;
  if (waiting) {
    const text = answer.kind === "text" ? answer.text : await ctx.askInteractively!(waiting);
    recordAnswer(ctx, waiting, text, Date.parse(waiting.timestamp));
    clearInteraction(paths.interactionDir);
    return;
  }
  if (answer.kind === "text") ctx.append({ type: "USER_MESSAGE", content: answer.text });
}

/**
 * Judges the holder named in the lock's own record (written the moment the lock is taken, unlike metadata.json):
 * why it is gone, false while it may be alive, or null when there is no record to judge.
 */
function lockHolderGone(paths: RunPaths, runId: string): string | false | null {
  const owner = readLockOwner(paths);
  if (!owner) return null;
  const holder = assessHolder({ run_id: runId, pid: owner.pid, hostname: owner.hostname, start_time_unix: owner.locked_at_unix });
  return holder.state === "dead" ? holder.reason : false;
}
