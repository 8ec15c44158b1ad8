// What the OTEL_* environment asks of live export: on or off, where, the batch bounds, and the standard samplers decided from the run's journaled trace alone.
import { describe, expect, it } from "vitest";
import { batchBoundsOf, liveExportChoice, samplingOf } from "../../src/trace/otel-env.js";
import type { RunTrace } from "../../src/trace/trace-ids.js";

// The low 56 bits of the first are 0x80…01 (just over half of 2^56), of the second 0x7f…ff (just under).
const HIGH = "0123456789abcdef0080000000000001";
const LOW = "0123456789abcdef007fffffffffffff";
const root = (traceId: string): RunTrace => ({ traceId, parentSpanId: null, parentSampled: null });
const child = (traceId: string, sampled: boolean): RunTrace => ({ traceId, parentSpanId: "00f067aa0ba902b7", parentSampled: sampled });
const sampled = (sampler: string | undefined, run: RunTrace, arg?: string): boolean =>
  samplingOf({ ...(sampler !== undefined ? { OTEL_TRACES_SAMPLER: sampler } : {}), ...(arg !== undefined ? { OTEL_TRACES_SAMPLER_ARG: arg } : {}) }, run).sampled;

describe("OTEL_TRACES_SAMPLER", () => {
  it("unset is parentbased_always_on: a root run is sampled, a child follows its caller's flag", () => {
    expect(sampled(undefined, root(HIGH))).toBe(true);
    expect(sampled(undefined, child(HIGH, false))).toBe(false);
    expect(sampled(undefined, child(HIGH, true))).toBe(true);
  });

  it("always_on and always_off ignore the caller", () => {
    expect(sampled("always_on", child(HIGH, false))).toBe(true);
    expect(sampled("always_off", child(HIGH, true))).toBe(false);
    expect(sampled("always_off", root(HIGH))).toBe(false);
  });

  it("parentbased_always_off records only under a sampled caller", () => {
    expect(sampled("parentbased_always_off", root(HIGH))).toBe(false);
    expect(sampled("parentbased_always_off", child(HIGH, true))).toBe(true);
    expect(sampled("parentbased_always_off", child(HIGH, false))).toBe(false);
  });

  it("traceidratio keeps a trace whose low 56 bits are at least (1 - ratio) × 2^56: the same id always gets the same answer", () => {
    expect(sampled("traceidratio", root(HIGH), "0.5")).toBe(true);
    expect(sampled("traceidratio", root(LOW), "0.5")).toBe(false);
    expect(sampled("traceidratio", root(LOW), "1")).toBe(true);
    expect(sampled("traceidratio", root(HIGH), "0")).toBe(false);
    expect(sampled("traceidratio", root("ffffffffffffffffffffffffffffffff"), "0")).toBe(false);
    // Not parent-based: the caller's flag does not count.
    expect(sampled("traceidratio", child(LOW, true), "0.5")).toBe(false);
    // About the ratio of many random ids.
    const ids = Array.from({ length: 4000 }, (_, index) => `${"0".repeat(18)}${((index * 2654435761) % 2 ** 32).toString(16).padStart(8, "0")}${index.toString(16).padStart(6, "0")}`);
    const kept = ids.filter((id) => sampled("traceidratio", root(id), "0.25")).length;
    expect(kept / ids.length).toBeGreaterThan(0.2);
    expect(kept / ids.length).toBeLessThan(0.3);
  });

  it("parentbased_traceidratio follows a caller and uses the ratio without one", () => {
    expect(sampled("parentbased_traceidratio", child(LOW, true), "0.5")).toBe(true);
    expect(sampled("parentbased_traceidratio", child(HIGH, false), "0.5")).toBe(false);
    expect(sampled("parentbased_traceidratio", root(HIGH), "0.5")).toBe(true);
    expect(sampled("parentbased_traceidratio", root(LOW), "0.5")).toBe(false);
  });

  it("an unknown sampler or a ratio out of range: one warning, and the specification's default", () => {
    const unknown = samplingOf({ OTEL_TRACES_SAMPLER: "jaeger_remote" }, child(HIGH, false));
    expect(unknown).toEqual({ sampled: false, warning: expect.stringContaining("OTEL_TRACES_SAMPLER=jaeger_remote is not supported; using parentbased_always_on") });
    expect(samplingOf({ OTEL_TRACES_SAMPLER: "bogus" }, root(LOW)).sampled).toBe(true);
    const badArg = samplingOf({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, root(LOW));
    expect(badArg).toEqual({ sampled: true, warning: expect.stringContaining("OTEL_TRACES_SAMPLER_ARG=2") });
    expect(samplingOf({ OTEL_TRACES_SAMPLER: "ALWAYS_OFF" }, root(HIGH))).toEqual({ sampled: false, warning: null });
  });

  it("live export is off for a run its sampler drops, with the warning passed on; export afterwards (no run) samples everything", () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" };
    expect(liveExportChoice(env, root(LOW))).toEqual({ kind: "off" });
    expect(liveExportChoice(env, root(HIGH)).kind).toBe("on");
    expect(liveExportChoice({ ...env, OTEL_TRACES_SAMPLER: "always_off" }, null).kind).toBe("on");
    expect(liveExportChoice({ ...env, OTEL_TRACES_SAMPLER: "nope" }, root(LOW))).toMatchObject({ kind: "on", warning: expect.stringContaining("nope") });
    // No endpoint: nothing to warn about.
    expect(liveExportChoice({ OTEL_TRACES_SAMPLER: "nope" }, root(LOW))).toEqual({ kind: "off" });
  });
});

describe("the exporter's variables", () => {
  const run = root(HIGH);
  it("on with an endpoint; the traces endpoint wins as given; the SDK disabled or another exporter turns it off", () => {
    expect(liveExportChoice({}, run)).toEqual({ kind: "off" });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }, run)).toMatchObject({ kind: "on", settings: { url: "http://c:4318/v1/traces", protocol: "http/protobuf", flushMs: 10_000, captureContent: false } });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t:9/x" }, run)).toMatchObject({ settings: { url: "http://t:9/x" } });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }, run)).toEqual({ kind: "off" });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "none" }, run)).toEqual({ kind: "off" });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_TRACES_EXPORTER: "console" }, run)).toEqual({ kind: "off" });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TIMEOUT: "1500", OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }, run)).toMatchObject({ settings: { flushMs: 1500, protocol: "http/json" } });
    expect(liveExportChoice({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, run)).toMatchObject({ kind: "refused" });
  });

  it("OTEL_BSP_* become the batch processor's bounds; a value that is not a positive number is left to the SDK's default", () => {
    expect(batchBoundsOf({ OTEL_BSP_SCHEDULE_DELAY: "200", OTEL_BSP_MAX_QUEUE_SIZE: "64", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "8", OTEL_BSP_EXPORT_TIMEOUT: "900" })).toEqual({ scheduledDelayMillis: 200, maxQueueSize: 64, maxExportBatchSize: 8, exportTimeoutMillis: 900 });
    expect(batchBoundsOf({ OTEL_BSP_SCHEDULE_DELAY: "soon", OTEL_BSP_MAX_QUEUE_SIZE: "-1", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "" })).toEqual({});
  });
});
