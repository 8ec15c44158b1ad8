// The on-disk state of sessions: where it lives, and reading and writing its files.
import { randomBytes } from "node:crypto";
import { appendFile, mkdir, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { errorMessage } from "../errors.js";
import { SessionError } from "./errors.js";
import { newSessionId, type SessionId } from "./ids.js";
import {
  SESSION_ID_PATTERN,
  SessionMetadataSchema,
  type HistoryEntry,
  type SessionMetadata,
} from "./schema.js";

interface SessionPaths {
  dir: string;
  metadata: string;
  env: string;
  workDir: string;
  history: string;
  lock: string;
}

/** `--sessions-dir`, else DELTA_SESSIONS_DIR, else `<cwd>/.sessions`; relative paths resolve against cwd. */
export function resolveSessionsRoot(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  const chosen = flag ?? (env.DELTA_SESSIONS_DIR || undefined) ?? ".sessions";
  return path.resolve(cwd, chosen);
}

export function sessionPaths(root: string, id: SessionId): SessionPaths {
  const dir = path.join(root, id);
  return {
    dir,
    metadata: path.join(dir, "metadata.json"),
    env: path.join(dir, "env.sh"),
    workDir: path.join(dir, "work_dir.txt"),
    history: path.join(dir, "history.log"),
    lock: path.join(dir, "exec.lock"),
  };
}

/** Claims a fresh session directory; exclusive mkdir makes two starts at once safe. */
export async function createSessionDir(root: string): Promise<SessionId> {
  await mkdir(root, { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    const id = newSessionId();
    try {
      // Private: env.sh may hold secrets from the environment the session started in.
      await mkdir(path.join(root, id), { mode: 0o700 });
      return id;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  throw new SessionError(`could not allocate a new session id under ${root}`);
}

export async function readMetadata(root: string, id: SessionId): Promise<SessionMetadata> {
  const file = sessionPaths(root, id).metadata;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SessionError(`unknown session ${id}: no such session in ${root} (start one with \`delta-sessions start\`)`);
    }
    throw new SessionError(`cannot read ${file}: ${errorMessage(err)}`);
  }
  return parseMetadata(file, text);
}

function parseMetadata(file: string, text: string): SessionMetadata {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SessionError(`${file} is not valid JSON (${errorMessage(err)}); end the session and start a new one`);
  }
  const parsed = SessionMetadataSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join(".") || "(root)";
    throw new SessionError(`${file}: field "${field}" is invalid (${issue?.message ?? "unknown problem"}); end the session and start a new one`);
  }
  return parsed.data;
}

/** Written to a temp file and renamed, so a reader never sees half a file. */
export async function writeMetadata(root: string, metadata: SessionMetadata): Promise<void> {
  const file = sessionPaths(root, metadata.session_id as SessionId).metadata;
  const temp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, `${JSON.stringify(metadata, null, 2)}\n`);
  await rename(temp, file);
}

export async function appendHistory(root: string, id: SessionId, entry: HistoryEntry): Promise<void> {
  await appendFile(sessionPaths(root, id).history, `${JSON.stringify(entry)}\n`);
}

/** The directory the last command ended in, or null when none was saved yet. */
export async function readWorkDir(root: string, id: SessionId): Promise<string | null> {
  try {
    const text = await readFile(sessionPaths(root, id).workDir, "utf8");
    const dir = text.replace(/\n$/, "");
    return dir === "" ? null : dir;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}

/** Removes everything of an ended session except metadata.json. */
export async function removeSessionState(root: string, id: SessionId): Promise<void> {
  const paths = sessionPaths(root, id);
  const names = await readdir(paths.dir);
  const lockName = path.basename(paths.lock);
  await Promise.all(
    names
      .filter((name) => name !== "metadata.json" && name !== lockName)
      .map((name) => rm(path.join(paths.dir, name), { recursive: true, force: true })),
  );
}

/** Every session under root, oldest first; unreadable ones are reported through warn and skipped. */
export async function listSessions(root: string, warn: (message: string) => void): Promise<SessionMetadata[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new SessionError(`cannot read sessions directory ${root}: ${errorMessage(err)}`);
  }
  const sessions: SessionMetadata[] = [];
  for (const name of names.filter((n) => SESSION_ID_PATTERN.test(n)).sort()) {
    try {
      sessions.push(await readMetadata(root, name as SessionId));
    } catch (err) {
      warn(`skipping ${name}: ${errorMessage(err)}`);
    }
  }
  return sessions.sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/** The metadata of a session that can still run commands; an ended one is refused. */
export async function readActiveMetadata(root: string, id: SessionId): Promise<SessionMetadata> {
  const metadata = await readMetadata(root, id);
  if (metadata.status !== "active") {
    throw new SessionError(`session ${id} has ended (status "${metadata.status}"); start a new one with \`delta-sessions start\``);
  }
  return metadata;
}
