// Why a process could not be started, as a fact each caller words for its own reader.
import { statSync } from "node:fs";

type SpawnFailureReason = "empty-command" | "no-working-directory" | "not-found" | "not-executable" | "other";

export interface SpawnFailure {
  reason: SpawnFailureReason;
  /** The program as given (argv[0]). */
  file: string;
  cwd: string;
  /** The system's error code (ENOENT, EACCES, E2BIG…), when there was one. */
  code: string | null;
  /** The system's message, for reason "other". */
  message: string;
}

export function emptyCommand(cwd: string): SpawnFailure {
  return { reason: "empty-command", file: "", cwd, code: null, message: "the command is empty" };
}

export function spawnFailure(file: string, cwd: string, error: unknown): SpawnFailure {
  const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : null;
  const message = error instanceof Error ? error.message : String(error);
  // spawn reports a missing cwd as ENOENT too, which would otherwise blame the command.
  const reason: SpawnFailureReason = !isDirectory(cwd) ? "no-working-directory" : code === "ENOENT" ? "not-found" : code === "EACCES" ? "not-executable" : "other";
  return { reason, file, cwd, code, message };
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The failure in words for a message or an observation. */
export function describeSpawnFailure(failure: SpawnFailure): string {
  switch (failure.reason) {
    case "empty-command":
      return "the command is empty";
    case "no-working-directory":
      return `working directory does not exist or is not a directory: ${failure.cwd}`;
    case "not-found":
      return `command not found: ${failure.file}`;
    case "not-executable":
      return `permission denied: ${failure.file} is not executable`;
    case "other":
      return `could not start ${failure.file}: ${failure.message}`;
  }
}
