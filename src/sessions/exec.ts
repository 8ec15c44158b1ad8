// Runs one command in a session: lock, restore state, run, save state, record history.
import { rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { SessionError } from "./errors.js";
import type { SessionId } from "./ids.js";
import { withSessionLock } from "./lock.js";
import { runWrapper, type WrapperOutcome } from "./run-wrapper.js";
import type { ExecResult, SessionMetadata } from "./schema.js";
import { wrapperArgv } from "./scripts.js";
import { appendHistory, readActiveMetadata, readWorkDir, sessionPaths, writeMetadata } from "./store.js";

export const DEFAULT_TIMEOUT_MS = 120_000;

interface ExecRequest {
  root: string;
  id: SessionId;
  command: string;
  timeoutMs: number;
  outputLimitBytes: number;
  warn: (message: string) => void;
}

export async function execInSession(request: ExecRequest): Promise<ExecResult> {
  const { root, id } = request;
  if (request.command.trim() === "") {
    throw new SessionError("the command is empty: pass it as one argument or on stdin");
  }
  // Fail fast on unknown or ended sessions before queueing for the lock.
  await readActiveMetadata(root, id);
  const paths = sessionPaths(root, id);
  return withSessionLock(paths.dir, { lockPath: paths.lock, waitMs: request.timeoutMs, warn: request.warn }, async () => {
    // Re-read under the lock: the session may have ended while we waited.
    const metadata = await readActiveMetadata(root, id);
    const cwd = await chooseWorkDir(root, id, metadata, request.warn);
    // One fixed name is enough: only the lock holder writes it.
    const commandFile = path.join(paths.dir, "command");
    await writeFile(commandFile, request.command.endsWith("\n") ? request.command : `${request.command}\n`, { mode: 0o600 });
    const startedAt = new Date().toISOString();
    let outcome: WrapperOutcome;
    try {
      outcome = await runWrapper(wrapperArgv(metadata.argv, paths.dir, commandFile), {
        cwd,
        // The saved env.sh is the whole environment, so an `unset` in one command persists.
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        timeoutMs: request.timeoutMs,
        outputLimitBytes: request.outputLimitBytes,
      });
    } finally {
      await rm(commandFile, { force: true });
    }
    if (outcome.spawnError !== null) {
      throw new SessionError(`cannot run session ${id} (${metadata.command}): ${outcome.spawnError}`);
    }
    await appendHistory(root, id, {
      at: startedAt,
      command: request.command,
      exit_code: outcome.exitCode,
      timed_out: outcome.timedOut,
      ms: outcome.durationMs,
    });
    await writeMetadata(root, {
      ...metadata,
      last_executed_at: new Date().toISOString(),
      execution_count: metadata.execution_count + 1,
    });
    if (outcome.interruptedBy !== null) {
      throw new SessionError(`interrupted by ${outcome.interruptedBy}: the command in session ${id} was killed`);
    }
    return {
      stdout: outcome.stdout,
      stderr: outcome.stderr,
      exit_code: outcome.exitCode,
      execution_time_ms: outcome.durationMs,
      timed_out: outcome.timedOut,
    };
  });
}

/** The directory the last command ended in; if it was deleted since, the session's start directory. */
async function chooseWorkDir(
  root: string,
  id: SessionId,
  metadata: SessionMetadata,
  warn: (message: string) => void,
): Promise<string> {
  const saved = await readWorkDir(root, id);
  if (saved !== null && (await isDirectory(saved))) return saved;
  if (await isDirectory(metadata.work_dir)) {
    if (saved !== null) warn(`the session's directory ${saved} no longer exists; running in ${metadata.work_dir}`);
    return metadata.work_dir;
  }
  throw new SessionError(`session ${id} cannot run: neither its directory ${saved ?? "(none saved)"} nor its start directory ${metadata.work_dir} exists any more`);
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}
