// Pure statistics for the benchmarks: median, quartiles and a one-line summary of repeated timings.

/** The q-quantile (0..1) of the numbers, linearly interpolated between the closest ranks. */
export function quantile(values, q) {
  if (values.length === 0) throw new Error("quantile of no values");
  if (!(q >= 0 && q <= 1)) throw new Error(`quantile must be within 0..1, got ${q}`);
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

export function median(values) {
  return quantile(values, 0.5);
}

/** Median, quartiles and extremes of repeated measurements. */
export function summarize(values) {
  return {
    n: values.length,
    median: median(values),
    q1: quantile(values, 0.25),
    q3: quantile(values, 0.75),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

/** `123.4 (IQR 120.1–130.0, min–max 118.0–140.2, n=10)` with the given number of decimals. */
export function formatSummary(summary, decimals = 1) {
  const f = (value) => value.toFixed(decimals);
  return `${f(summary.median)} (IQR ${f(summary.q1)}–${f(summary.q3)}, min–max ${f(summary.min)}–${f(summary.max)}, n=${summary.n})`;
}

/** Consecutive differences: gaps between arrival times. */
export function gaps(times) {
  const result = [];
  for (let i = 1; i < times.length; i += 1) result.push(times[i] - times[i - 1]);
  return result;
}

/**
 * How much of each request repeats the previous one byte for byte from its start (what a prompt
 * cache can serve): per request from the second on, the common prefix's share of its length, and
 * over the run, the common prefixes' total over the requests' total.
 */
export function prefixReuse(bodies) {
  const perRequest = [];
  let shared = 0;
  let total = 0;
  for (let i = 1; i < bodies.length; i += 1) {
    const previous = bodies[i - 1];
    const current = bodies[i];
    let common = 0;
    while (common < previous.length && common < current.length && previous.charCodeAt(common) === current.charCodeAt(common)) common += 1;
    perRequest.push(common / current.length);
    shared += common;
    total += current.length;
  }
  return { perRequest, overall: total === 0 ? 0 : shared / total };
}
