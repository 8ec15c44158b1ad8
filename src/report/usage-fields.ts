// The usage fields a report shows, in one table: a field the journal gains (cached or reasoning tokens, cost) is one line here.
import type { Usage } from "../journal/events.js";

export interface UsageField {
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

export function addUsage(total: UsageTotals, usage: UsageTotals): void {
  for (const [key, value] of Object.entries(usage)) total[key] = (total[key] ?? 0) + value;
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
