// The run directory layout under <workDir>/.delta/: paths, the layout VERSION, and exclusive claiming of a run id.
import { existsSync, linkSync, lstatSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { readRunFile } from "../safe-open.js";
import { join, resolve } from "node:path";
import { EngineError, RunRefusedError } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { PRIVATE_DIR_MODE } from "../private-modes.js";
import { randomHex } from "../random-hex.js";
import { syncDirectory, tempPathFor } from "./atomic-file.js";
import { makeDirs } from "./make-dirs.js";
import { isKnownLayout } from "./original-run.js";
import { generateRunId, type RunId } from "./run-id.js";

const LAYOUT_VERSION = "1";

/** Hidden name a run directory is built under before it is published; a crash can leave one behind, never a half-made run. */
export const STAGING_PREFIX = ".claim-";

export interface RunPaths {
  runDir: string;
  journal: string;
  metadata: string;
  engineLog: string;
  invocationsDir: string;
  toolExecutionsDir: string;
  hooksDir: string;
  interactionDir: string;
  /** The owner records of the run, one per process that held it (see store/lease/take-run.ts). */
  lock: string;
}

function controlDir(workDir: string): string {
  return join(workDir, ".delta");
}

/** Where a run's files live; touches no disk. */
export function runPaths(workDir: string, runId: RunId): RunPaths {
  return pathsIn(join(controlDir(workDir), runId));
}

function pathsIn(runDir: string): RunPaths {
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
function ensureLayoutVersion(workDir: string): void {
  const dir = controlDir(workDir);
  const versionFile = join(dir, "VERSION");
  try {
    makeDirs(dir);
    if (!existsSync(versionFile)) publishVersionFile(versionFile);
  } catch (err) {
    throw fsError(`Cannot write to the workspace ${workDir}`, err, { otherwise: "refused" });
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

/** VERSION holds a short layout number; anything longer is not ours. */
const MAX_VERSION_BYTES = 256;

function checkLayoutVersion(versionFile: string): void {
  const found = readRunFile(versionFile, MAX_VERSION_BYTES).trim();
  if (!isKnownLayout(found, LAYOUT_VERSION)) {
    throw new EngineError(
      `${versionFile} says layout version ${JSON.stringify(found)}, but this engine understands version ${LAYOUT_VERSION}; ` +
        "use the engine version that created this workspace, or a new workspace",
    );
  }
}

/** A run directory built under a hidden name: write its first files into `paths`, then `publish` it under its id. */
export interface StagedRun {
  runId: string;
  /** The staged (hidden) directory's paths. */
  paths: RunPaths;
  /** Renames the staged directory to `.delta/<runId>`; refuses (and removes the staged one) when the id was taken meanwhile. */
  publish(): RunPaths;
  /** Removes the staged directory. */
  discard(): void;
}

/**
 * Starts claiming `runId`. The run directory only appears, by one rename, once the caller has written its first
 * files, so a crash at any moment leaves either a complete run or no run (and maybe a hidden .claim-* directory).
 */
export function stageRunDir(workDir: string, runId: RunId): StagedRun {
  const final = runPaths(workDir, runId);
  ensureLayoutVersion(workDir);
  if (entryExists(final.runDir)) throw idTaken(workDir, runId);
  const staged = pathsIn(join(controlDir(workDir), `${STAGING_PREFIX}${runId}.${process.pid}.${randomHex(4)}`));
  try {
    mkdirSync(staged.runDir, { mode: PRIVATE_DIR_MODE });
    for (const dir of [staged.invocationsDir, staged.toolExecutionsDir, staged.hooksDir]) mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  } catch (err) {
    rmSync(staged.runDir, { recursive: true, force: true });
    throw fsError(`Cannot create the run directory ${final.runDir}`, err, { otherwise: "refused" });
  }
  const discard = (): void => rmSync(staged.runDir, { recursive: true, force: true });
  return {
    runId,
    paths: staged,
    discard,
    publish: () => {
      try {
        // rename() would replace an empty directory, so an existing one is refused first.
        if (entryExists(final.runDir)) throw idTaken(workDir, runId);
        renameSync(staged.runDir, final.runDir);
      } catch (err) {
        discard();
        const code = (err as NodeJS.ErrnoException).code;
        if (err instanceof RunRefusedError) throw err;
        if (code === "EEXIST" || code === "ENOTEMPTY" || code === "ENOTDIR") throw idTaken(workDir, runId);
        throw fsError(`Cannot publish the run directory ${final.runDir}`, err);
      }
      try {
        syncDirectory(controlDir(workDir));
      } catch {
        // Best effort: the rename has happened; some file systems cannot fsync a directory.
      }
      return final;
    },
  };
}

/** Stages a generated id, drawing another on the rare clash. */
export function stageNewRunDir(workDir: string): StagedRun {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return stageRunDir(workDir, generateRunId());
    } catch (err) {
      if (!(err instanceof RunRefusedError) || attempt >= 9) throw err;
    }
  }
}

/** Anything at `path`, a dangling symlink included (existsSync follows links and would say no). */
function entryExists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function idTaken(workDir: string, runId: RunId): RunRefusedError {
  const paths = runPaths(workDir, runId);
  if (!isDirectory(paths.runDir)) return notARunDir(paths.runDir);
  if (isLeftover(paths)) return leftoverRun(workDir, runId);
  return new RunRefusedError(`run id ${runId} already exists in ${workDir}; choose another id or use \`delta continue --run-id ${runId}\``);
}

/**
 * A run folder with owner records but neither journal nor metadata: what a run left when it was removed (an older
 * engine's `prune` racing a `continue` re-created it holding only `.lock/`, or it was emptied by hand). Not a run:
 * nothing in it can be continued, listed or shown; `delta prune --yes` removes it.
 */
export function isLeftover(paths: RunPaths): boolean {
  return existsSync(paths.lock) && !existsSync(paths.journal) && !existsSync(paths.metadata);
}

/** The refusal every command gives a leftover run folder: what it is, and how to free its id. */
export function leftoverRun(workDir: string, runId: RunId): RunRefusedError {
  const { runDir } = runPaths(workDir, runId);
  return new RunRefusedError(
    `${runDir} holds no journal, only owner records (.lock/): what is left of run ${runId} after it was removed while another process was taking it. ` +
      `Nothing of the run remains to continue or show. \`delta prune -w ${workDir} --keep 0 --yes\` removes the folder (or remove it by hand), and the id ${runId} is free again.`,
  );
}

function notARunDir(path: string): RunRefusedError {
  return new RunRefusedError(`${path} exists but is not a run directory (a dangling symlink, or a file); remove it, or choose another run id`);
}

/** The paths of an existing run, or a refusal that says how to list the runs there. */
export function findRunDir(workDir: string, runId: RunId): RunPaths {
  const paths = runPaths(workDir, runId);
  const versionFile = join(controlDir(workDir), "VERSION");
  if (existsSync(versionFile)) checkLayoutVersion(versionFile);
  if (!isDirectory(paths.runDir)) {
    if (entryExists(paths.runDir)) throw notARunDir(paths.runDir);
    throw new RunRefusedError(`no run ${runId} in ${workDir}; list the runs there with \`delta list-runs -w ${workDir}\``);
  }
  if (isLeftover(paths)) throw leftoverRun(workDir, runId);
  return paths;
}

/** The paths of a run folder named by its path, wherever it lies (a copied one, a CI artifact): refused unless it holds a journal. */
export function runFolderPaths(dir: string): RunPaths {
  const paths = pathsIn(resolve(dir));
  if (!isDirectory(paths.runDir)) throw new RunRefusedError(`${dir} is not a directory; give a run folder (<workspace>/.delta/<run-id>) or a run id`);
  if (!existsSync(paths.journal)) throw new RunRefusedError(`${dir} holds no journal.jsonl, so it is not a run folder; give a run folder (<workspace>/.delta/<run-id>) or a run id`);
  return paths;
}

export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
