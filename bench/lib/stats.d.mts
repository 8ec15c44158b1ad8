// Types of stats.mjs, so TypeScript tests can import the benchmark's helpers.
export interface Summary {
  n: number;
  median: number;
  q1: number;
  q3: number;
  min: number;
  max: number;
}
export function quantile(values: readonly number[], q: number): number;
export function median(values: readonly number[]): number;
export function summarize(values: readonly number[]): Summary;
export function formatSummary(summary: Summary, decimals?: number): string;
export function gaps(times: readonly number[]): number[];
export function prefixReuse(bodies: readonly string[]): { perRequest: number[]; overall: number };
