// The usage fields a report shows, in one table: a field the journal gains (cached or reasoning tokens, cost) is one line here.
import type { Usage } from "../journal/events.js";
import { costOf, type UsageTotals as RunTotals } from "../journal/usage-totals.js";

interface UsageField {
  /** The key in a THOUGHT's `usage`. */
  key: string;
  /** Its short name in text and in the HTML chart. */
  label: string;
  format: (value: number) => string;
}

const tokens = (value: number): string => value.toLocaleString("en-US");
const usd = (value: number): string => `$${value < 0.01 && value > 0 ? value.toPrecision(2) : value.toFixed(4)}`;

/** Shown when present, in this order; tokens before money. */
export const USAGE_FIELDS: readonly UsageField[] = [
  { key: "input_tokens", label: "in", format: tokens },
  { key: "cached_input_tokens", label: "cached", format: tokens },
  { key: "cache_write_input_tokens", label: "cache write", format: tokens },
  { key: "output_tokens", label: "out", format: tokens },
  { key: "reasoning_tokens", label: "reasoning", format: tokens },
  { key: "cost_usd", label: "cost", format: usd },
];

/** Summed usage: each numeric field the THOUGHTs carried, added up. */
export type UsageTotals = Record<string, number>;

/** The numeric fields of one usage record, whatever the journal's schema version holds. */
export function usageNumbers(usage: Usage | null): UsageTotals {
  const numbers: UsageTotals = {};
  for (const [key, value] of Object.entries(usage ?? {})) if (typeof value === "number" && Number.isFinite(value)) numbers[key] = value;
  return numbers;
}

/** The token fields of the journal's one sum (journal/usage-totals.ts), which the RunResult gives too. */
const TOKEN_KEYS = ["input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_tokens"] as const;

/**
 * A run's totals as a report shows them: the journal's own sum (so report, `show` and the RunResult agree, a server's
 * impossible cached count clamped alike), with the token fields some call carried (`present`), and the cost when every call has one.
 */
export function runUsageShown(total: RunTotals, present: ReadonlySet<string>): UsageTotals {
  const shown: UsageTotals = {};
  for (const key of TOKEN_KEYS) if (present.has(key)) shown[key] = total[key];
  const cost = total.calls === 0 ? null : costOf(total, undefined);
  if (cost !== null) shown.cost_usd = cost;
  return shown;
}

/** Adds one run's shown totals to a workspace's. */
export function addRunUsage(workspace: UsageTotals, run: UsageTotals): void {
  for (const [key, value] of Object.entries(run)) workspace[key] = (workspace[key] ?? 0) + value;
}

/** `212 in · 31 out`, the fields present in table order; null when none is. */
export function formatUsage(usage: UsageTotals): string | null {
  const parts = USAGE_FIELDS.filter((field) => usage[field.key] !== undefined).map((field) => `${field.format(usage[field.key]!)} ${field.label}`);
  return parts.length > 0 ? parts.join(" · ") : null;
}

/** The token fields alone, for a place that shows the cost on its own. */
export function formatTokens(usage: UsageTotals): string | null {
  const { cost_usd: _cost, ...tokens } = usage;
  return formatUsage(tokens);
}

/** The recorded cost, formatted; null when the journal holds none (never shown as 0). */
export function costText(usage: UsageTotals): string | null {
  return usage.cost_usd === undefined ? null : usd(usage.cost_usd);
}
