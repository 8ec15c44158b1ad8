// Reads one file of an output schema (the schema, or a file one of its $refs names) through the one safe open: bounded, never waiting on a FIFO, no link out of its folder.
import { ConfigError, FileRefusedError } from "../errors.js";
import { isMissingFile, readFolderFile } from "../safe-open.js";
import { parseYamlText } from "./yaml-file.js";

/**
 * One schema file: far above a hand-written schema (a few KiB) and above what providers' native structured output takes
 * (OpenAI's strict mode: 5,000 properties), far below one that would take the engine minutes to load (a 1.7 MB schema of
 * 30,000 properties takes 13 s to compile).
 */
export const MAX_SCHEMA_FILE_BYTES = 512 << 10;

interface SchemaFilePlace {
  /** The file as named (absolute). */
  path: string;
  /** The agent's folder, which no link may lead out of; null for `--output-schema FILE`, a path the user named. */
  folder: string | null;
  /** How messages name the file. */
  display: string;
  /** Where it was named, prefixed to a refusal ("agent.yaml: output_schema"). */
  namedAt: string;
  /** The refusal for a file that is not there. */
  missing: string;
}

/** The file's value (JSON or YAML) and its size in bytes; a file that is not there, or refused, is a refusal naming where it was named. */
export function readSchemaFile(place: SchemaFilePlace): { data: unknown; bytes: number } {
  let bytes: Buffer;
  try {
    bytes = readFolderFile({ path: place.path, folder: place.folder, maxBytes: MAX_SCHEMA_FILE_BYTES, what: "an output schema file" });
  } catch (err) {
    if (isMissingFile(err)) throw new ConfigError(place.missing, { cause: err });
    if (err instanceof FileRefusedError) throw new FileRefusedError(`${place.namedAt}: ${err.message}`, { cause: err, problem: err.problem });
    throw err;
  }
  return { data: parseSchemaText(bytes.toString("utf8"), place.display), bytes: bytes.length };
}

/** JSON is parsed as JSON (a hundred times faster than as YAML); anything else, or JSON with a mistake, as YAML, whose errors name the line. */
function parseSchemaText(text: string, display: string): unknown {
  if (text.trimStart().startsWith("{")) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      // Read as YAML below: it names the line and column of the mistake.
    }
  }
  return parseYamlText(text, display).data;
}
