// Creates a session: claims its directory, checks the shell runs, and saves its initial state.
import { rm } from "node:fs/promises";
import shellQuote from "shell-quote";
import { childEnvironment } from "../process/child-env.js";
import { withheldVariables } from "../run/child-env.js";
import { SessionError } from "./errors.js";
import { runWrapper } from "./run-wrapper.js";
import type { SessionStatus } from "./schema.js";
import { wrapperArgv } from "./scripts.js";
import { createSessionDir, sessionPaths, writeMetadata } from "./store.js";

const DEFAULT_SESSION_ARGV = ["bash"];
const START_TIMEOUT_MS = 30_000;

export interface StartRequest {
  root: string;
  argv: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  outputLimitBytes: number;
}

interface StartResult {
  session_id: string;
  command: string;
  work_dir: string;
  status: SessionStatus;
}

export async function startSession(request: StartRequest): Promise<StartResult> {
  const argv = request.argv.length > 0 ? [...request.argv] : DEFAULT_SESSION_ARGV;
  const command = shellQuote.quote(argv);
  const id = await createSessionDir(request.root);
  const paths = sessionPaths(request.root, id);
  try {
    await writeMetadata(request.root, {
      session_id: id,
      command,
      argv,
      created_at: new Date().toISOString(),
      last_executed_at: null,
      status: "active",
      work_dir: request.cwd,
      execution_count: 0,
    });
    const outcome = await runWrapper(wrapperArgv(argv, paths.dir, null), {
      cwd: request.cwd,
      // env.sh keeps this environment on disk, where any tool in the workspace may read it: no provider keys.
      env: childEnvironment(request.env, { withheld: withheldVariables(request.env) }),
      timeoutMs: START_TIMEOUT_MS,
      outputLimitBytes: request.outputLimitBytes,
    });
    if (outcome.spawnError !== null || outcome.exitCode !== 0) {
      const reason = outcome.spawnError ?? (outcome.stderr.trim() || `exit code ${outcome.exitCode ?? "none (timed out)"}`);
      throw new SessionError(`cannot start a session running ${JSON.stringify(command)}: ${reason}`);
    }
  } catch (err) {
    // A session that never started leaves nothing behind.
    await rm(paths.dir, { recursive: true, force: true });
    throw err;
  }
  return { session_id: id, command, work_dir: request.cwd, status: "active" };
}
