// Run ids: the rule a caller-chosen id must follow, and the engine's own generated ids.
import { RunRefusedError } from "../errors.js";
import { randomHex } from "../random-hex.js";

const RUN_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;

/** Throws RunRefusedError unless `id` is safe to use as a directory name. */
export function validateRunId(id: string): void {
  if (RUN_ID.test(id)) return;
  throw new RunRefusedError(
    `Invalid run id ${JSON.stringify(id)}: a run id is 1 to 128 characters of letters, digits, '.', '_' and '-', ` +
      "and must not start with '.' (for example 20251013_143522_a1b2c3 or a UUID)",
  );
}

/** `YYYYMMDD_HHMMSS_<6 hex>` in UTC; unique enough, and claiming the directory catches the rare clash. */
export function generateRunId(now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace("T", "_").slice(0, 15);
  return `${stamp}_${randomHex(3)}`;
}
