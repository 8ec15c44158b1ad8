// Validates parsed YAML with a zod schema and turns every issue into one readable line.
import type { z } from "zod";
import { ConfigError } from "../errors.js";
import type { YamlFile } from "./yaml-file.js";

export function parseWithSchema<Schema extends z.ZodType>(schema: Schema, file: YamlFile, pathPrefix: PropertyKey[] = []): z.infer<Schema> {
  const result = schema.safeParse(file.data);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => formatIssue(issue, file, pathPrefix));
  throw new ConfigError(lines.join("\n"));
}

/** `tools[2].exec` */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => {
    if (typeof key === "number") return `${text}[${key}]`;
    return text === "" ? String(key) : `${text}.${String(key)}`;
  }, "");
}

function formatIssue(issue: z.core.$ZodIssue, file: YamlFile, pathPrefix: PropertyKey[]): string {
  const path = [...pathPrefix, ...issue.path];
  const field = formatFieldPath(path);
  // Point at the unknown key itself rather than at the mapping that holds it.
  const keyPath = issue.code === "unrecognized_keys" && issue.keys[0] !== undefined ? [...path, issue.keys[0]] : path;
  const line = file.locate(keyPath) ?? file.locate(path);
  const at = line ? ` (at ${line})` : "";
  const head = field === "" ? `${file.display}:` : `${file.display}: ${field}:`;
  return `${head} ${issue.message}${hintFor(issue)}${at}`;
}

function hintFor(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "unrecognized_keys":
      return ` — remove ${issue.keys.length > 1 ? "these keys" : "it"} or fix the spelling`;
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
