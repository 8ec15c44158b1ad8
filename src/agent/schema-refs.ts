// Makes an output schema self-contained: each `$ref` to a file inside the agent home is copied under the schema's own definitions; a `$ref` anywhere else is refused.
import { realpath } from "node:fs/promises";
import path from "node:path";
import { ConfigError } from "../errors.js";
import { displayPath } from "./imports.js";
import { MAX_SCHEMA_FILE_BYTES, readSchemaFile } from "./schema-file.js";
import { formatFieldPath } from "./zod-issues.js";

type Json = Record<string, unknown>;

/** Where a schema (or a file it refers to) came from: how messages name it, and the folder its relative `$ref`s start from. */
export interface SchemaOrigin {
  /** e.g. "agent.yaml", "schemas/verdict.json" */
  display: string;
  /** The field path of the schema inside that file ([] for a schema file, ["output_schema"] inline). */
  field: PropertyKey[];
  baseDir: string;
}

/** Keywords whose values are data, not schemas: a `$ref` key inside them is not a reference. */
const DATA_KEYWORDS = new Set(["enum", "const", "default", "examples"]);
/** Files one schema may pull in: far more than a hand-written schema needs, far less than a runaway. */
const MAX_FILES = 50;
/** The bytes of all of a schema's files together: what one file may hold, twice. */
const MAX_SCHEMA_BYTES = 2 * MAX_SCHEMA_FILE_BYTES;

/**
 * The schema with every file it refers to (and those refer to) placed under `defsKey` (`$defs`,
 * or `definitions` for draft-07) and each such `$ref` pointing there. `$id`, `$anchor` and
 * `$dynamicRef` are refused: a reference is a path inside the agent home or a `#/…` pointer.
 */
export async function bundleSchemaRefs(schema: Json, origin: SchemaOrigin, home: string, defsKey: "$defs" | "definitions", firstFileBytes: number): Promise<Json> {
  const files = new Map<string, string>();
  let bytes = firstFileBytes;
  const defs: Json = {};
  const rewrite = async (node: unknown, from: SchemaOrigin, at: PropertyKey[], fileKey: string | null): Promise<unknown> => {
    if (Array.isArray(node)) return Promise.all(node.map((item, index) => rewrite(item, from, [...at, index], fileKey)));
    if (typeof node !== "object" || node === null) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      const field = [...at, key];
      if (key === "$id" || key === "$anchor" || key === "$dynamicRef" || key === "$dynamicAnchor" || key === "$recursiveRef") {
        // The root's own $id names the schema; it changes nothing once it stands alone.
        if (key === "$id" && at.length === from.field.length) continue;
        throw refusal(from, field, `${key} is not supported in an output schema; refer to other parts with "#/…" pointers and to other files by their path inside the agent directory`);
      }
      if (key === "$schema" && fileKey !== null) continue;
      if (key === "$ref" && typeof value === "string") out[key] = await reference(value, from, field, fileKey);
      else out[key] = DATA_KEYWORDS.has(key) ? value : await rewrite(value, from, field, fileKey);
    }
    return out;
  };
  const reference = async (ref: string, from: SchemaOrigin, field: PropertyKey[], fileKey: string | null): Promise<string> => {
    const hash = ref.indexOf("#");
    const target = hash === -1 ? ref : ref.slice(0, hash);
    const fragment = hash === -1 ? "" : ref.slice(hash + 1);
    if (fragment !== "" && !fragment.startsWith("/")) {
      throw refusal(from, field, `$ref '${ref}': only "#/…" JSON pointers are supported after '#', not anchors`);
    }
    if (target === "") return fileKey === null ? ref : `#/${defsKey}/${fileKey}${fragment}`;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || path.isAbsolute(target)) {
      throw refusal(from, field, `$ref '${ref}' points outside the agent directory ${home}; a $ref names a part of the schema ("#/…") or a file inside the agent directory by its relative path`);
    }
    const key = await include(path.resolve(from.baseDir, target), ref, from, field);
    return `#/${defsKey}/${key}${fragment}`;
  };
  const include = async (absolute: string, ref: string, from: SchemaOrigin, field: PropertyKey[]): Promise<string> => {
    let real: string;
    const missing = refusal(from, field, `$ref '${ref}' names ${absolute}, which is not there; paths are relative to ${from.display}`);
    try {
      real = await realpath(absolute);
    } catch {
      throw missing;
    }
    const relative = path.relative(home, real);
    if (relative === "" || relative.startsWith("..") || path.isAbsolute(relative)) {
      throw refusal(from, field, `$ref '${ref}' resolves to ${real}, outside the agent directory ${home}; copy the file into the agent directory (symlinks are resolved)`);
    }
    const known = files.get(real);
    if (known !== undefined) return known;
    if (files.size >= MAX_FILES) throw refusal(from, field, `$ref '${ref}': an output schema may refer to at most ${MAX_FILES} files`);
    const key = uniqueKey(relative, defs);
    files.set(real, key);
    defs[key] = {};
    const display = displayPath(home, real);
    const read = readSchemaFile({ path: real, folder: home, display, namedAt: `${from.display}: ${formatFieldPath(field)}`, missing: missing.message });
    bytes += read.bytes;
    if (bytes > MAX_SCHEMA_BYTES) throw refusal(from, field, `$ref '${ref}': an output schema's files may hold at most ${MAX_SCHEMA_BYTES} bytes together`);
    defs[key] = await rewrite(read.data, { display, field: [], baseDir: path.dirname(real) }, [], key);
    return key;
  };

  const bundled = (await rewrite(schema, origin, origin.field, null)) as Json;
  if (files.size === 0) return bundled;
  const own = bundled[defsKey];
  return { ...bundled, [defsKey]: { ...(typeof own === "object" && own !== null ? own : {}), ...defs } };
}

/** A definitions key for a file, from its path inside the home: readable, and a valid JSON pointer token. */
function uniqueKey(relative: string, taken: Json): string {
  const base = `file_${relative.split(path.sep).join("_").replace(/[^A-Za-z0-9._-]/g, "_")}`;
  let key = base;
  for (let n = 2; key in taken; n += 1) key = `${base}-${n}`;
  return key;
}

function refusal(from: SchemaOrigin, field: PropertyKey[], message: string): ConfigError {
  const at = formatFieldPath(field);
  return new ConfigError(`${from.display}: ${at === "" ? "" : `${at}: `}${message}`);
}
