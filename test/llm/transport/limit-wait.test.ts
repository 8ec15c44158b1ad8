// The wait a limited server asks for: Retry-After in all its forms, else the reset of the limit that ran out (OpenAI durations, Anthropic times).
import { describe, expect, it } from "vitest";
import { durationMs, serverWait } from "../../../src/llm/transport/limit-wait.js";
import { recordedEntry } from "../../support/recorded.js";

const headers = (values: Record<string, string>) => new Headers(values);
const NOW = Date.parse("2025-01-01T00:00:00Z");

describe("serverWait: Retry-After", () => {
  it("reads seconds, retry-after-ms and an HTTP date, retry-after-ms first", () => {
    expect(serverWait(headers({ "retry-after": "2" }), NOW)).toEqual({ ms: 2000, header: "retry-after" });
    expect(serverWait(headers({ "retry-after": "0.5" }), NOW)?.ms).toBe(500);
    expect(serverWait(headers({ "retry-after": "9", "retry-after-ms": "250" }), NOW)).toEqual({ ms: 250, header: "retry-after-ms" });
    expect(serverWait(headers({ "retry-after": "Wed, 01 Jan 2025 00:00:03 GMT" }), NOW)?.ms).toBe(3000);
    expect(serverWait(headers({ "retry-after": "Tue, 31 Dec 2024 00:00:00 GMT" }), NOW)?.ms).toBe(0);
  });

  it("gives null when no header says, or it is unreadable; an empty retry-after-ms is not a zero", () => {
    expect(serverWait(headers({}))).toBeNull();
    expect(serverWait(headers({ "retry-after": "soon" }))).toBeNull();
    expect(serverWait(headers({ "retry-after-ms": "", "retry-after": "3" }), NOW)).toEqual({ ms: 3000, header: "retry-after" });
  });

  it("prefers Retry-After over the reset headers (Azure's recorded 429 carries both, 60 and 60)", () => {
    const azure = recordedEntry("azure/error-rate-limit-429-retry-after").headers!;
    expect(serverWait(headers(azure), NOW)).toEqual({ ms: 60_000, header: "retry-after" });
  });
});

describe("serverWait: OpenAI's x-ratelimit-reset-* durations", () => {
  it("reads every shape recorded from OpenAI: ms, fractional s, m and s", () => {
    // Values as recorded (rate-limit research notes: ellmer, Mirascope, openllmetry and opentelemetry-python-contrib cassettes).
    expect(durationMs("0s")).toBe(0);
    expect(durationMs("12ms")).toBe(12);
    expect(durationMs("736ms")).toBe(736);
    expect(durationMs("9.24s")).toBe(9240);
    expect(durationMs("7m12s")).toBe(432_000);
    expect(durationMs("1m13.588s")).toBe(73_588);
    expect(durationMs("20m52.666s")).toBe(1_252_666);
    expect(durationMs("1h0m0s")).toBe(3_600_000);
    // Azure: a bare number of seconds; a negative is unknown.
    expect(durationMs("60")).toBe(60_000);
    expect(durationMs("-1")).toBeNull();
    expect(durationMs("soon")).toBeNull();
  });

  it("waits for the limit that ran out (remaining 0), the latest of several", () => {
    const wait = serverWait(
      headers({ "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "7m12s", "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "9.24s" }),
      NOW,
    );
    expect(wait).toEqual({ ms: 432_000, header: "x-ratelimit-reset-requests" });
  });

  it("ignores the reset of a limit with room left: the recorded too-large-request 429 gives no wait", () => {
    // remaining-tokens 1999998, remaining-requests 4999: neither limit ran out; waiting cannot help this request.
    const recorded = recordedEntry("openai-chat/error-request-too-large-tpm-429").headers!;
    expect(serverWait(headers(recorded), NOW)).toBeNull();
  });
});

describe("serverWait: Anthropic's anthropic-ratelimit-*-reset times", () => {
  it("measures an RFC 3339 reset from the server's Date, not this host's clock", () => {
    const wait = serverWait(
      headers({ date: "Thu, 06 Nov 2025 14:56:11 GMT", "anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "2025-11-06T15:56:11Z" }),
      Date.parse("2025-11-06T14:00:00Z"),
    );
    expect(wait).toEqual({ ms: 3_600_000, header: "anthropic-ratelimit-tokens-reset" });
  });

  it("takes a reset already past as no wait, and ignores a limit with room (the recorded input-tokens 429)", () => {
    expect(serverWait(headers({ date: "Thu, 06 Nov 2025 14:56:11 GMT", "anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2025-11-06T14:56:09Z" }))?.ms).toBe(0);
    const recorded = recordedEntry("anthropic/error-rate-limit-input-tokens-429").headers!;
    expect(serverWait(headers(recorded), NOW)).toBeNull();
  });
});
