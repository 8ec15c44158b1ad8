// Reads one context file through the one safe open (no link out of its folder, no FIFO, bounded), applying the source's on_missing rule.
import { ConfigError, EngineError, FileRefusedError, errorMessage } from "../errors.js";
import { folderFileRereader } from "../safe-open.js";

/** A context file larger than this is refused: more than any model's window holds, and a planted /dev/zero or huge file must not grow the engine. */
const MAX_CONTEXT_FILE_BYTES = 8 << 20;

export interface SourceFile {
  /** How messages and errors name the source: `'<id or file name>' (sources[i])`. */
  label: string;
  /** The field to fix when the file is missing, e.g. `sources[1].path`. */
  field: string;
  path: string;
  /** The folder the path is named in (the workspace, the agent's folder, or the file's own): no link may lead out of it. */
  folder: string;
  onMissing: "skip" | "error";
  /** What to do about a missing file, before the on_missing advice. */
  missingHint: string;
  /** What every box of the run is shown empty: no link may lead into it. */
  hidden?: readonly string[];
}

// The context's files are read every iteration: a file found again untouched at its name is not resolved again.
const readContextFile = folderFileRereader();

/** The file's text, or null when it is missing and may be skipped; an empty file is "". */
export async function readSourceFile(source: SourceFile): Promise<string | null> {
  let bytes: Buffer | null;
  try {
    // Read whole every iteration: the file may change between iterations and that is the point.
    // Synchronous: context files are small (and bounded) and nothing else runs while the context is built.
    bytes = readContextFile({ path: source.path, folder: source.folder, maxBytes: MAX_CONTEXT_FILE_BYTES, what: "a context file", hidden: source.hidden ?? [] });
  } catch (err) {
    if (err instanceof FileRefusedError) throw new FileRefusedError(`context.yaml source ${source.label}: ${err.message}`, { cause: err, problem: err.problem });
    throw new EngineError(`context.yaml source ${source.label}: cannot read ${source.path}: ${errorMessage(err)}`, { cause: err });
  }
  if (bytes !== null) return bytes.toString("utf8");
  if (source.onMissing === "skip") return null;
  throw new ConfigError(
    `context.yaml source ${source.label}: file not found: ${source.path} (${source.field}). ` +
      `${source.missingHint}, or set on_missing: skip to make it optional.`,
  );
}
