// Chooses the workspace a run works in: `-w <dir>`, or W001, W002… under the agent, allocated without races.
import { existsSync, mkdirSync, readdirSync, realpathSync, rmdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { EngineError, UsageError } from "../errors.js";
import { fsError } from "../fs-errors.js";
import { writeFileAtomic } from "./atomic-file.js";
import { makeDirs } from "./make-dirs.js";
import { readRunFile } from "../safe-open.js";

export interface WorkspaceRequest {
  agentHome: string;
  /** The `-w` flag, as typed. */
  workDir?: string;
  yes: boolean;
  isTTY: boolean;
  /** Shows a question on stderr and returns the answer typed; only used with a terminal and without `-y`. */
  prompt?: (question: string) => Promise<string>;
}

export interface Workspace {
  workDir: string;
  workspaceId: string;
  created: boolean;
  /** The highest folder `-w` had to create when it was more than the workspace itself: removed too on a refusal. */
  createdFrom?: string;
}

const WORKSPACE_NAME = /^W(\d{3,})$/;
const MAX_ALLOCATION_ATTEMPTS = 1000;

export async function resolveWorkspace(request: WorkspaceRequest): Promise<Workspace> {
  if (request.workDir !== undefined) return explicitWorkspace(request.workDir);
  const rootExisted = existsSync(join(request.agentHome, "workspaces"));
  const root = workspacesRoot(request.agentHome);
  const lastUsed = readLastUsed(root);
  const reuse = lastUsed !== null && request.isTTY && !request.yes && request.prompt
    ? await askToReuse(request.prompt, lastUsed)
    : false;
  if (reuse && lastUsed) return { workDir: join(root, lastUsed), workspaceId: lastUsed, created: false };
  const allocated = allocateWorkspace(root);
  return rootExisted ? allocated : { ...allocated, createdFrom: realpathSync(root) };
}

/** Records an agent workspace (not a `-w` one) as LAST_USED: called once the run is sure to start, so a refusal leaves it as it was. */
export function rememberLastUsed(agentHome: string, workspace: Workspace): void {
  writeFileAtomic(join(workspacesRoot(agentHome), "LAST_USED"), `${workspace.workspaceId}\n`);
}

/** Removes what resolveWorkspace created for a run that was then refused, so a refusal leaves nothing behind; keeps anything not empty. */
export function removeCreatedWorkspace(workspace: Workspace): void {
  if (!workspace.created) return;
  const top = workspace.createdFrom ?? workspace.workDir;
  for (let dir = workspace.workDir; ; dir = dirname(dir)) {
    try {
      rmdirSync(dir);
    } catch {
      return;
    }
    if (dir === top || dirname(dir) === dir) return;
  }
}

function explicitWorkspace(workDir: string): Workspace {
  const absolute = resolve(workDir);
  let created = false;
  try {
    const existing = statOrNull(absolute);
    if (existing && !existing.isDirectory()) throw new UsageError(`-w ${workDir}: ${absolute} exists and is not a directory; give a directory`);
    let createdFrom: string | undefined;
    if (!existing) {
      createdFrom = highestMissing(absolute);
      makeDirs(absolute);
      created = true;
    }
    const real = realpathSync(absolute);
    return { workDir: real, workspaceId: basename(real), created, ...(createdFrom !== undefined && createdFrom !== absolute ? { createdFrom: realpathSync(createdFrom) } : {}) };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw fsError(`-w ${workDir}: cannot use ${absolute} as the workspace`, err, { otherwise: "refused" });
  }
}

/** The workspaces under `<agent>/workspaces/` (every visible directory, W001… and any other), sorted; none when there is no such folder. */
export function listWorkspaces(agentHome: string): string[] {
  const root = join(agentHome, "workspaces");
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw fsError(`Cannot list the workspaces in ${root}`, err, { otherwise: "refused" });
  }
  return entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith(".")).map((entry) => join(root, entry.name)).sort();
}

/** The highest folder of `dir` that does not exist yet (`dir` itself when only it is missing). */
function highestMissing(dir: string): string {
  let missing = dir;
  while (dirname(missing) !== missing && !existsSync(dirname(missing))) missing = dirname(missing);
  return missing;
}

function workspacesRoot(agentHome: string): string {
  const root = join(agentHome, "workspaces");
  try {
    mkdirSync(root, { recursive: true });
  } catch (err) {
    throw fsError(`Cannot create ${root}`, err, { hint: "check that the agent directory is writable, or pass -w <dir>", otherwise: "refused" });
  }
  return root;
}

/** Exclusive mkdir decides who gets a number; a loser moves on to the next one. */
function allocateWorkspace(root: string): Workspace {
  let next = highestNumber(root) + 1;
  for (let attempt = 0; attempt < MAX_ALLOCATION_ATTEMPTS; attempt += 1, next += 1) {
    const workspaceId = `W${String(next).padStart(3, "0")}`;
    const workDir = join(root, workspaceId);
    try {
      mkdirSync(workDir);
      return { workDir: realpathSync(workDir), workspaceId, created: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw fsError(`Cannot create the workspace ${workDir}`, err, { otherwise: "refused" });
      }
    }
  }
  throw new EngineError(`Could not allocate a new workspace in ${root} after ${MAX_ALLOCATION_ATTEMPTS} attempts; pass -w <dir>`);
}

function highestNumber(root: string): number {
  let highest = 0;
  for (const name of readdirSync(root)) {
    const match = WORKSPACE_NAME.exec(name);
    if (match?.[1]) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}

/** LAST_USED holds one workspace id. */
const MAX_LAST_USED_BYTES = 4096;

/** The last used workspace id, if LAST_USED names one that still exists (an unreadable or refused file names none). */
function readLastUsed(root: string): string | null {
  let id: string;
  try {
    // A tool working in a workspace can reach this file: a FIFO or a /dev/zero there must not hold every later run.
    id = readRunFile(join(root, "LAST_USED"), MAX_LAST_USED_BYTES).trim();
  } catch {
    return null;
  }
  return WORKSPACE_NAME.test(id) && statOrNull(join(root, id))?.isDirectory() ? id : null;
}

async function askToReuse(prompt: (question: string) => Promise<string>, lastUsed: string): Promise<boolean> {
  const question = `Choose a workspace:\n  [N] new workspace (default)\n  [1] ${lastUsed} (last used)\n> `;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const answer = (await prompt(question)).trim();
    if (answer === "" || /^n(ew)?$/i.test(answer)) return false;
    if (answer === "1" || answer === lastUsed) return true;
  }
  throw new UsageError(`No workspace chosen: answer N for a new workspace or 1 for ${lastUsed}, or pass -y or -w <dir>`);
}

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
