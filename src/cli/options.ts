// Checks of flag values shared by the commands: numbers, formats, statuses, run ids.
import { didYouMean } from "../did-you-mean.js";
import { UsageError } from "../errors.js";
import { RunStatusSchema, type RunStatus } from "../journal/events.js";
import { parseRunId, type RunId } from "../store/run-id.js";
import { FORMATS, type OutputFormat } from "./output.js";

export function parseFormat(value: unknown, allowed: readonly OutputFormat[] = FORMATS): OutputFormat {
  if (value === undefined) return "text";
  const text = String(value);
  const found = allowed.find((format) => format === text);
  if (!found) throw new UsageError(`--format must be one of ${allowed.join(", ")} (got '${text}').${didYouMean(text, allowed)}`);
  return found;
}

export function parsePositiveInt(flag: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1_000_000) {
    throw new UsageError(`${flag} must be a whole number from 1 to 1000000 (got '${text}').`);
  }
  return Number(text);
}

export function parseStatus(value: unknown): RunStatus | undefined {
  if (value === undefined) return undefined;
  const parsed = RunStatusSchema.safeParse(String(value).toUpperCase());
  if (!parsed.success) throw new UsageError(`--status must be one of ${RunStatusSchema.options.join(", ")} (got '${String(value)}').${didYouMean(String(value).toUpperCase(), RunStatusSchema.options)}`);
  return parsed.data;
}

export function optionalString(flag: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    throw new UsageError(Array.isArray(value) ? `${flag} was given more than once; give it once.` : `${flag} needs a value.`);
  }
  return value;
}

/** A run id given on the command line (`--run-id`, or the positional of show, report and export): checked here, once. */
export function optionalRunId(flag: string, value: unknown): RunId | undefined {
  const given = optionalString(flag, value);
  return given === undefined ? undefined : parseRunId(given);
}
