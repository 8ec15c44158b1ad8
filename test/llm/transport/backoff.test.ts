// Backoff delays, and the wait between attempts.
import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, backoffDelayMs, sleep } from "../../../src/llm/transport/backoff.js";

describe("backoffDelayMs", () => {
  it("doubles from the base, stays within the jitter band and never passes the cap", () => {
    expect(backoffDelayMs(1, DEFAULT_BACKOFF, () => 0.5)).toBe(500);
    expect(backoffDelayMs(3, DEFAULT_BACKOFF, () => 0.5)).toBe(2000);
    expect(backoffDelayMs(2, DEFAULT_BACKOFF, () => 0)).toBe(800);
    expect(backoffDelayMs(2, DEFAULT_BACKOFF, () => 0.999)).toBeLessThanOrEqual(1200);
    expect(backoffDelayMs(20, DEFAULT_BACKOFF, () => 0.999)).toBe(DEFAULT_BACKOFF.capMs);
  });
});

describe("sleep", () => {
  it("rejects at once when the signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 10);
    // A sleep that ran its course would resolve, not reject.
    await expect(sleep(10_000, controller.signal)).rejects.toThrow("stop");
  });
});
