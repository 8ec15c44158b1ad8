// Run ids: the one rule a caller-chosen id must follow, checked once where an id enters (a flag, a tool's argument, a listing) and carried as a RunId from there; and the engine's own generated ids.
import { z } from "zod";
import { RunRefusedError } from "../errors.js";
import { randomHex } from "../random-hex.js";

const RULE = "a run id is 1 to 128 characters of letters, digits, '.', '_' and '-', and must not start with '.' (for example 20251013_143522_a1b2c3 or a UUID)";

/** A run id: safe as a directory name under .delta/. Only this schema (and generateRunId) makes one. */
const RunIdSchema = z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/, RULE).brand<"RunId">();
export type RunId = z.infer<typeof RunIdSchema>;

/** `id` as a RunId; refused (126) naming it and the rule when it is not one. */
export function parseRunId(id: string): RunId {
  const parsed = RunIdSchema.safeParse(id);
  if (parsed.success) return parsed.data;
  throw new RunRefusedError(`Invalid run id ${JSON.stringify(id)}: ${RULE}`);
}

/** Whether a directory's name is a run id (a listing leaves out what is not). */
export function isRunId(name: string): name is RunId {
  return RunIdSchema.safeParse(name).success;
}

/** `YYYYMMDD_HHMMSS_<6 hex>` in UTC; unique enough, and claiming the directory catches the rare clash. */
export function generateRunId(now: Date = new Date()): RunId {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
  return `${stamp}_${randomHex(3)}` as RunId;
}
