// The bearer token `delta mcp serve --http` requires of every request: from --token-file, from DELTA_MCP_TOKEN, or generated once into a 0600 file in the user's state folder.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, openSync, readSync, realpathSync, writeSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { UsageError } from "../errors.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../private-modes.js";
import { TOKEN_VARIABLE } from "./child-runs.js";

/** The file the generated token lives in, inside the user's state folder. */
const TOKEN_FILE_NAME = "mcp-token";
/** Shorter is guessable; the generated one is 43 characters (32 random bytes). */
const MIN_TOKEN_CHARS = 16;
const MAX_TOKEN_FILE_BYTES = 4096;
/** What an HTTP header value carries without quoting or folding. */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

interface ServeToken {
  token: string;
  /** Where it came from, as the server prints it: never the token itself. */
  source: string;
  /** The file holding it, when one does (--token-file, or the generated one). */
  file?: string;
}

interface TokenSources {
  tokenFile: string | undefined;
  env: NodeJS.ProcessEnv;
  /** The user's state folder (store/user-state.ts), where a token is generated when none is given. */
  stateDir: string;
  /** Folders the runs' tools can read (the agent's, the workspace): a token file inside one is refused. */
  guarded: readonly string[];
}

/** --token-file, else DELTA_MCP_TOKEN, else the generated file (made on first use, kept for later starts); refused (126) with the fix when unusable. */
export function serveToken(sources: TokenSources): ServeToken {
  if (sources.tokenFile !== undefined) {
    const file = resolve(sources.tokenFile);
    checkOutside(file, sources.guarded, `--token-file ${file}`);
    return { token: readTokenFile(file, `--token-file ${file}`), source: `--token-file ${file}`, file };
  }
  const given = sources.env[TOKEN_VARIABLE];
  if (given !== undefined && given !== "") return { token: checkToken(given, TOKEN_VARIABLE), source: TOKEN_VARIABLE };
  const file = join(sources.stateDir, TOKEN_FILE_NAME);
  checkOutside(file, sources.guarded, `the token file ${file} ($XDG_STATE_HOME)`);
  return { token: generatedToken(file), source: file, file };
}

/** Compares in constant time, whatever the lengths: an `Authorization` header against `Bearer <token>`. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const digest = (text: string): Buffer => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(header ?? ""), digest(`Bearer ${token}`));
}

function generatedToken(file: string): string {
  const what = `the token file ${file}`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    const fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_FILE_MODE);
    try {
      const token = randomBytes(32).toString("base64url");
      writeSync(fd, `${token}\n`);
      fsyncSync(fd);
      return token;
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    // Made by an earlier start (or another server starting now): the same token, so clients keep working.
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return readTokenFile(file, what);
    throw new UsageError(`cannot write ${what}: ${(err as Error).message}; give a token with ${TOKEN_VARIABLE} or --token-file <file>, or set XDG_STATE_HOME to a folder you can write`, { cause: err });
  }
}

/** A regular file of this user, readable by no one else, holding one token line; never waits on a FIFO. */
function readTokenFile(file: string, what: string): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new UsageError(`cannot read ${what}: ${(err as Error).message}`, { cause: err });
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UsageError(`${what} is not a regular file; give a file holding the token on one line`);
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) throw new UsageError(`${what} belongs to user ${stats.uid}, not to you; a token file must be your own`);
    if ((stats.mode & 0o077) !== 0) {
      throw new UsageError(`${what} can be read or written by others (mode ${(stats.mode & 0o777).toString(8)}); anyone who reads it can start runs as you: chmod 600 ${file}`);
    }
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > MAX_TOKEN_FILE_BYTES) throw new UsageError(`${what} is longer than ${MAX_TOKEN_FILE_BYTES} bytes; it must hold the token on one line`);
    return checkToken(buffer.toString("utf8", 0, length).split(/\r?\n/)[0]!.trim(), what);
  } finally {
    closeSync(fd);
  }
}

function checkToken(token: string, what: string): string {
  if (token.length < MIN_TOKEN_CHARS || !TOKEN_CHARS.test(token)) {
    throw new UsageError(`${what}: the token must be at least ${MIN_TOKEN_CHARS} printable characters with no spaces; make one with: openssl rand -base64 32`);
  }
  return token;
}

/** A token file the runs' tools could read would let them call the server: it must lie outside the agent's folder and the workspace. */
function checkOutside(file: string, guarded: readonly string[], what: string): void {
  const real = realOrSelf(dirname(file));
  for (const folder of guarded) {
    const inside = relative(realOrSelf(folder), real);
    if (inside === "" || (!inside.startsWith("..") && !inside.startsWith("/"))) {
      throw new UsageError(`${what} lies inside ${folder}, where the runs' tools can read it; keep the token outside the agent's folder and the workspace`);
    }
  }
}

/** The path with its symlinks resolved, or as given when it does not exist yet. */
function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
