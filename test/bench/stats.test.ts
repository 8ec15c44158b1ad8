// The benchmark's statistics: quantiles interpolate between ranks, summaries report spread, gaps are consecutive differences.
import { describe, expect, it } from "vitest";
import { formatSummary, gaps, median, prefixReuse, quantile, summarize } from "../../bench/lib/stats.mjs";

describe("benchmark statistics", () => {
  it("takes the middle value of an odd count and the mean of the middle two of an even count, whatever the order", () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });

  it("interpolates quartiles linearly between ranks", () => {
    const values = [10, 20, 30, 40, 50];
    expect(quantile(values, 0)).toBe(10);
    expect(quantile(values, 0.25)).toBe(20);
    expect(quantile(values, 0.75)).toBe(40);
    expect(quantile(values, 1)).toBe(50);
    expect(quantile([0, 10], 0.25)).toBe(2.5);
  });

  it("refuses an empty list and a quantile outside 0..1", () => {
    expect(() => median([])).toThrow(/no values/);
    expect(() => quantile([1], 1.5)).toThrow(/within 0..1/);
  });

  it("summarizes spread without mutating the input", () => {
    const values = [7, 3, 100, 5, 4];
    const summary = summarize(values);
    expect(summary).toEqual({ n: 5, median: 5, q1: 4, q3: 7, min: 3, max: 100 });
    expect(values).toEqual([7, 3, 100, 5, 4]);
    expect(formatSummary(summary, 0)).toBe("5 (IQR 4–7, min–max 3–100, n=5)");
  });

  it("turns arrival times into the gaps between them", () => {
    expect(gaps([100, 112, 130, 131])).toEqual([12, 18, 1]);
    expect(gaps([5])).toEqual([]);
  });

  it("measures each request's byte-identical prefix of the previous one, per request and over the run", () => {
    const reuse = prefixReuse(["abcd", "abcdef", "abXYZZ", "abXYZZ12"]);
    expect(reuse.perRequest).toEqual([4 / 6, 2 / 6, 6 / 8]);
    expect(reuse.overall).toBe((4 + 2 + 6) / (6 + 6 + 8));
    expect(prefixReuse(["only one"])).toEqual({ perRequest: [], overall: 0 });
  });
});
