// Validates parsed YAML with a zod schema and turns every issue into one readable line.
import type { z } from "zod";
import { ConfigError } from "../errors.js";
import type { YamlFile } from "./yaml-file.js";

export function parseWithSchema<Schema extends z.ZodType>(schema: Schema, file: YamlFile, pathPrefix: PropertyKey[] = []): z.infer<Schema> {
  const result = schema.safeParse(file.data);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => formatIssue(issue, file, pathPrefix, schema));
  throw new ConfigError(lines.join("\n"));
}

/** `tools[2].exec` */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === "number") return `${text}[${key}]`;
    return text === "" ? String(key) : `${text}.${String(key)}`;
  }, "");
}

function formatIssue(issue: z.core.$ZodIssue, file: YamlFile, pathPrefix: PropertyKey[], schema: z.ZodType): string {
  const path = [...pathPrefix, ...issue.path];
  const field = formatFieldPath(path);
  // Point at the unknown key itself (its name, not its value) rather than at the mapping that holds it.
  const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
  const line = (unknownKey === undefined ? undefined : file.locateKey([...path, unknownKey])) ?? file.locate(path);
  const at = line ? ` (at ${line})` : "";
  const head = field === "" ? `${file.display}:` : `${file.display}: ${field}:`;
  const known = issue.code === "unrecognized_keys" ? knownKeys(schema, issue.path) : [];
  return `${head} ${issue.message}${hintFor(issue, known)}${at}`;
}

function hintFor(issue: z.core.$ZodIssue, known: readonly string[]): string {
  switch (issue.code) {
    case "unrecognized_keys": {
      const guesses = issue.keys.flatMap((key) => {
        const guess = nearestKey(key, known);
        return guess === undefined ? [] : [`did you mean \`${guess}\` for \`${key}\`?`];
      });
      const guessed = guesses.length === 0 ? "" : ` (${guesses.join(" ")})`;
      return ` — remove ${issue.keys.length > 1 ? "these keys" : "it"} or fix the spelling${guessed}`;
    }
    case "invalid_type":
      return issue.message.endsWith("received undefined") ? " — this field is required; add it" : " — change the value's type";
    case "invalid_value":
      return " — use one of the allowed values";
    case "too_big":
    case "too_small":
      return " — change the value to fit the limit";
    default:
      return "";
  }
}

/** The keys an object schema allows at a path of the data, through lists and optional wrappers; none where that cannot be told (a union). */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.core.$ZodType | undefined = unwrap(schema);
  for (const key of path) {
    if (node === undefined) return [];
    const def = node._zod.def;
    if (def.type === "array" && typeof key === "number") node = unwrap((def as z.core.$ZodArrayDef).element);
    else if (def.type === "object" && typeof key === "string") node = unwrapOptional((def as z.core.$ZodObjectDef).shape[key]);
    else return [];
  }
  return node?._zod.def.type === "object" ? Object.keys((node._zod.def as z.core.$ZodObjectDef).shape) : [];
}

function unwrapOptional(node: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  return node === undefined ? undefined : unwrap(node);
}

function unwrap(node: z.core.$ZodType): z.core.$ZodType {
  const def = node._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
  if (def.innerType !== undefined) return unwrap(def.innerType);
  if (def.type === "pipe" && def.in !== undefined) return unwrap(def.in);
  return node;
}

/** The allowed key a misspelt one most likely meant: at most two edits away, and fewer than half its letters. */
function nearestKey(typed: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(typed.toLowerCase(), key.toLowerCase());
    if (distance <= 2 && distance * 2 < key.length && (best === undefined || distance < best.distance)) best = { key, distance };
  }
  return best?.key;
}

/** Edits (insert, delete, change, swap two neighbours) that turn `a` into `b`: a swap is one slip of the fingers. */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + change);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
