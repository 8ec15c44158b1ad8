// Reads one context file once, applying the source's on_missing rule.
import { readFileSync } from "node:fs";
import { ConfigError, EngineError, errorMessage } from "../errors.js";

export interface SourceFile {
  /** How messages and errors name the source: `'<id or file name>' (sources[i])`. */
  label: string;
  /** The field to fix when the file is missing, e.g. `sources[1].path`. */
  field: string;
  path: string;
  onMissing: "skip" | "error";
  /** What to do about a missing file, before the on_missing advice. */
  missingHint: string;
}

/** The file's text, or null when it is missing and may be skipped; an empty file is "". */
export async function readSourceFile(source: SourceFile): Promise<string | null> {
  try {
    // One read, no stat first: the file may change between iterations and that is the point.
    // Synchronous: context files are small and nothing else runs while the context is built,
    // and it costs a fraction of fs/promises' open/stat/read/close round trips.
    return readFileSync(source.path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      if (source.onMissing === "skip") return null;
      throw new ConfigError(
        `context.yaml source ${source.label}: file not found: ${source.path} (${source.field}). ` +
          `${source.missingHint}, or set on_missing: skip to make it optional.`,
      );
    }
    if (code === "EISDIR") {
      throw new ConfigError(`context.yaml source ${source.label}: ${source.path} is a directory, not a file (${source.field}).`);
    }
    throw new EngineError(`context.yaml source ${source.label}: cannot read ${source.path}: ${errorMessage(err)}`, { cause: err });
  }
}
