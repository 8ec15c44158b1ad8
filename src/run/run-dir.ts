// The run directory layout under <workDir>/.delta/: paths, the layout VERSION, and exclusive claiming of a run id.
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EngineError, RunRefusedError, errorMessage } from "../errors.js";
import { tempPathFor } from "./atomic-file.js";
import { generateRunId, validateRunId } from "./run-id.js";

export const LAYOUT_VERSION = "1";

export interface RunPaths {
  runDir: string;
  journal: string;
  metadata: string;
  engineLog: string;
  invocationsDir: string;
  toolExecutionsDir: string;
  hooksDir: string;
  interactionDir: string;
  /** The lock directory proper-lockfile creates while a process writes this run. */
  lock: string;
}

export function controlDir(workDir: string): string {
  return join(workDir, ".delta");
}

/** Where a run's files live; touches no disk. */
export function runPaths(workDir: string, runId: string): RunPaths {
  validateRunId(runId);
  const runDir = join(controlDir(workDir), runId);
  return {
    runDir,
    journal: join(runDir, "journal.jsonl"),
    metadata: join(runDir, "metadata.json"),
    engineLog: join(runDir, "engine.log"),
    invocationsDir: join(runDir, "io", "invocations"),
    toolExecutionsDir: join(runDir, "io", "tool_executions"),
    hooksDir: join(runDir, "io", "hooks"),
    interactionDir: join(runDir, "interaction"),
    lock: join(runDir, ".lock"),
  };
}

/** Creates .delta/VERSION when missing (never visible half-written) and refuses a layout this engine does not know. */
export function ensureLayoutVersion(workDir: string): void {
  const dir = controlDir(workDir);
  const versionFile = join(dir, "VERSION");
  try {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(versionFile)) publishVersionFile(versionFile);
  } catch (err) {
    throw new EngineError(`Cannot prepare ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  checkLayoutVersion(versionFile);
}

/** link() fails on an existing target, so concurrent creators cannot overwrite each other or expose an empty file. */
function publishVersionFile(versionFile: string): void {
  const temp = tempPathFor(versionFile);
  writeFileSync(temp, `${LAYOUT_VERSION}\n`);
  try {
    linkSync(temp, versionFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(temp, { force: true });
  }
}

function checkLayoutVersion(versionFile: string): void {
  const found = readFileSync(versionFile, "utf8").trim();
  if (found !== LAYOUT_VERSION) {
    throw new EngineError(
      `${versionFile} says layout version ${JSON.stringify(found)}, but this engine understands version ${LAYOUT_VERSION}; ` +
        "use the engine version that created this workspace, or a new workspace",
    );
  }
}

/** Creates the run's directory exclusively: an existing one means the id is taken. */
export function claimRunDir(workDir: string, runId: string): RunPaths {
  const paths = runPaths(workDir, runId);
  ensureLayoutVersion(workDir);
  try {
    mkdirSync(paths.runDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      throw new RunRefusedError(
        `run id ${runId} already exists in ${workDir}; choose another id or use \`delta continue --run-id ${runId}\``,
      );
    }
    throw new EngineError(`Cannot create the run directory ${paths.runDir}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    for (const dir of [paths.invocationsDir, paths.toolExecutionsDir, paths.hooksDir]) mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new EngineError(`Cannot create the io directories of ${paths.runDir}: ${errorMessage(err)}`, { cause: err });
  }
  return paths;
}

/** Claims a generated id, drawing another on the rare clash. */
export function claimNewRunDir(workDir: string): { runId: string; paths: RunPaths } {
  for (let attempt = 0; ; attempt += 1) {
    const runId = generateRunId();
    try {
      return { runId, paths: claimRunDir(workDir, runId) };
    } catch (err) {
      if (!(err instanceof RunRefusedError) || attempt >= 9) throw err;
    }
  }
}

/** The paths of an existing run, or a refusal that says how to list the runs there. */
export function findRunDir(workDir: string, runId: string): RunPaths {
  const paths = runPaths(workDir, runId);
  const versionFile = join(controlDir(workDir), "VERSION");
  if (existsSync(versionFile)) checkLayoutVersion(versionFile);
  if (!isDirectory(paths.runDir)) {
    throw new RunRefusedError(`no run ${runId} in ${workDir}; list the runs there with \`delta list-runs -w ${workDir}\``);
  }
  return paths;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
