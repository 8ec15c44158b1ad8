// Backoff delays and the server's Retry-After, in all the forms servers send it.
import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, backoffDelayMs, retryAfterMs, sleep } from "../../../src/llm/transport/backoff.js";

const headers = (values: Record<string, string>) => new Headers(values);

describe("backoffDelayMs", () => {
  it("doubles from the base, stays within the jitter band and never passes the cap", () => {
    expect(backoffDelayMs(1, DEFAULT_BACKOFF, () => 0.5)).toBe(500);
    expect(backoffDelayMs(3, DEFAULT_BACKOFF, () => 0.5)).toBe(2000);
    expect(backoffDelayMs(2, DEFAULT_BACKOFF, () => 0)).toBe(800);
    expect(backoffDelayMs(2, DEFAULT_BACKOFF, () => 0.999)).toBeLessThanOrEqual(1200);
    expect(backoffDelayMs(20, DEFAULT_BACKOFF, () => 0.999)).toBe(DEFAULT_BACKOFF.capMs);
  });
});

describe("retryAfterMs", () => {
  it("reads seconds, retry-after-ms and an HTTP date", () => {
    const now = Date.parse("2025-01-01T00:00:00Z");
    expect(retryAfterMs(headers({ "retry-after": "2" }), now)).toBe(2000);
    expect(retryAfterMs(headers({ "retry-after": "0.5" }), now)).toBe(500);
    expect(retryAfterMs(headers({ "retry-after": "9", "retry-after-ms": "250" }), now)).toBe(250);
    expect(retryAfterMs(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }), now)).toBe(3000);
    expect(retryAfterMs(headers({ "retry-after": "Tue, 31 Dec 2024 00:00:00 GMT" }), now)).toBe(0);
  });

  it("gives null when the header is absent or unreadable", () => {
    expect(retryAfterMs(headers({}))).toBeNull();
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
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
