// The one classifier of file-system errors: each errno becomes one error type, exit code and fix.
import { DiskFullError, EngineError, StorageIoError, WorkspaceError, errorMessage, type DeltaError } from "./errors.js";

type FsFailure = "unwritable" | "full" | "io" | "other";

const KINDS: Record<string, FsFailure> = {
  EROFS: "unwritable",
  EACCES: "unwritable",
  EPERM: "unwritable",
  ENOSPC: "full",
  EDQUOT: "full",
  EFBIG: "full",
  EIO: "io",
  ESTALE: "io",
};

export function classifyFsError(err: unknown): FsFailure {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return (code !== undefined && KINDS[code]) || "other";
}

interface FsErrorOptions {
  /** How to make the place writable, when it is not. */
  hint?: string;
  /** Any other errno, while nothing has run yet (a path given as a workspace is a file, say): refused (126), or failed (1, the default). */
  otherwise?: "refused" | "failed";
}

/**
 * `doing` says what failed ("Cannot create the run directory /x"); the error's type and the fix follow
 * from the errno: an unwritable place is the caller's to fix (126, `hint` says how); a full disk or an
 * I/O error is the machine's (exit 1: free space or fix the device, then `delta continue`).
 */
export function fsError(doing: string, err: unknown, options: FsErrorOptions = {}): DeltaError {
  const message = `${doing}: ${errorMessage(err)}`;
  switch (classifyFsError(err)) {
    case "unwritable":
      return new WorkspaceError(`${message}; ${options.hint ?? "give a writable directory with -w"}`, { cause: err });
    case "full":
      return new DiskFullError(`${message}; the disk is full: free some space, then \`delta continue\` the run`, { cause: err });
    case "io":
      return new StorageIoError(`${message}; the storage device reported an I/O error: check it, then \`delta continue\` the run`, { cause: err });
    case "other":
      return options.otherwise === "refused" ? new WorkspaceError(message, { cause: err }) : new EngineError(message, { cause: err });
  }
}
