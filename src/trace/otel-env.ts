// What the standard OTEL_* environment asks of delta's traces: whether to export live, where, how, and what must stay secret.
import { urlCredentials } from "../secrets.js";
import type { RunTrace } from "./trace-ids.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

/** An OTLP exporter's headers, for every signal (OTEL_EXPORTER_OTLP_HEADERS, …_TRACES_HEADERS): often a collector's API key. */
const OTLP_HEADERS = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?HEADERS$/;
/** An OTLP exporter's endpoint, for every signal: a user:password@ in it is a credential. */
const OTLP_ENDPOINT = /^OTEL_EXPORTER_OTLP_(?:[A-Z]+_)?ENDPOINT$/;

/** The credentials an OTLP exporter variable holds (every header value, or a user:password@ in an endpoint); none for any other variable. */
export function otlpCredentials(name: string, value: string): string[] {
  if (OTLP_HEADERS.test(name)) return [value];
  if (OTLP_ENDPOINT.test(name)) return urlCredentials(value.trim());
  return [];
}

export interface LiveExportSettings {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: OtlpProtocol;
  /** The longest the engine waits at exit for its spans to be sent (OTEL_EXPORTER_OTLP_TIMEOUT, default 10 s). */
  flushMs: number;
  captureContent: boolean;
}

type LiveExportChoice = { kind: "off"; warning?: string } | { kind: "on"; settings: LiveExportSettings; warning?: string } | { kind: "refused"; warning: string };

const DEFAULT_TIMEOUT_MS = 10_000;

/** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: content goes on spans only when it says true. */
export function captureContentOf(env: NodeJS.ProcessEnv): boolean {
  return env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true";
}

/**
 * Decides from the environment alone (nothing is loaded) whether this process exports its spans as it runs.
 * `run`: the run's trace as its journal holds it, for OTEL_TRACES_SAMPLER; null records everything (`delta export`).
 */
export function liveExportChoice(env: NodeJS.ProcessEnv, run: RunTrace | null): LiveExportChoice {
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (tracesEndpoint === null && endpoint === null) return { kind: "off" };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return { kind: "off" };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",").map((name) => name.trim().toLowerCase());
  if (exporters.includes("none") || !exporters.includes("otlp")) return { kind: "off" };
  const sampling = run === null ? { sampled: true, warning: null } : samplingOf(env, run);
  const warned = sampling.warning === null ? {} : { warning: sampling.warning };
  if (!sampling.sampled) return { kind: "off", ...warned };
  const protocol = (nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ?? nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ?? "http/protobuf").toLowerCase();
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return { kind: "refused", warning: `[warning] OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported (delta exports over http/protobuf or http/json); no spans are exported. Point it at the collector's OTLP/HTTP port (4318) instead.` };
  }
  return {
    kind: "on",
    settings: {
      url: tracesEndpoint ?? `${endpoint!.replace(/\/+$/, "")}/v1/traces`,
      protocol,
      flushMs: timeoutOf(env),
      captureContent: captureContentOf(env),
    },
    ...warned,
  };
}

/**
 * The credentials of the OTLP exporter variables: each header variable's value and its values (`k=v,k2=v2`, percent-decoded
 * too), and the user:password@ of an endpoint: strings that must never reach a run's files.
 */
export function otlpSecrets(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([name, raw]) => {
    if (!raw) return [];
    const found = otlpCredentials(name, raw);
    if (!name.endsWith("_HEADERS")) return found;
    return [...found, ...raw.split(",").flatMap((pair) => {
      const value = pair.slice(pair.indexOf("=") + 1).trim();
      if (!pair.includes("=") || value === "") return [];
      try {
        return [value, decodeURIComponent(value)];
      } catch {
        return [value];
      }
    })];
  });
}

/** The BatchSpanProcessor's bounds from OTEL_BSP_*, the ones given. */
export function batchBoundsOf(env: NodeJS.ProcessEnv): { scheduledDelayMillis?: number; maxQueueSize?: number; maxExportBatchSize?: number; exportTimeoutMillis?: number } {
  const bound = (name: string): number | undefined => {
    const value = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(value) && value > 0 ? value : undefined;
  };
  const bounds = {
    scheduledDelayMillis: bound("OTEL_BSP_SCHEDULE_DELAY"),
    maxQueueSize: bound("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: bound("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
    exportTimeoutMillis: bound("OTEL_BSP_EXPORT_TIMEOUT"),
  };
  return Object.fromEntries(Object.entries(bounds).filter(([, value]) => value !== undefined));
}

function timeoutOf(env: NodeJS.ProcessEnv): number {
  const raw = env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT;
  const value = Number(raw);
  return raw !== undefined && Number.isFinite(value) && value > 0 ? value : DEFAULT_TIMEOUT_MS;
}

/**
 * Whether OTEL_TRACES_SAMPLER (with OTEL_TRACES_SAMPLER_ARG) records the run: decided from what its journal holds
 * (the trace id, the caller's sampled flag), never from this process's own environment of the moment, so every
 * invocation of a run agrees. The parentbased_* samplers follow a caller's flag and use their root sampler without
 * a caller; traceidratio keeps a trace when the low 56 bits of its id are at least (1 - ratio) × 2^56, as the
 * OpenTelemetry specification's TraceIdRatioBased does. An unknown sampler warns and is parentbased_always_on.
 */
export function samplingOf(env: NodeJS.ProcessEnv, run: RunTrace): { sampled: boolean; warning: string | null } {
  const given = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  const known = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];
  const sampler = known.includes(given) ? given : "parentbased_always_on";
  let warning = sampler === given ? null : `[warning] OTEL_TRACES_SAMPLER=${given} is not supported; using parentbased_always_on. Use one of ${known.join(", ")}.`;
  if (sampler.startsWith("parentbased_") && run.parentSampled !== null) return { sampled: run.parentSampled, warning };
  const root = sampler.replace(/^parentbased_/, "");
  if (root === "always_on") return { sampled: true, warning };
  if (root === "always_off") return { sampled: false, warning };
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  let ratio = arg === undefined || arg === "" ? 1 : Number(arg);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    warning ??= `[warning] OTEL_TRACES_SAMPLER_ARG=${arg} is not a ratio between 0 and 1; using 1 (every run is sampled).`;
    ratio = 1;
  }
  const threshold = BigInt(Math.round((1 - ratio) * 2 ** 56));
  // The trace id's randomness: its last 14 hex digits (56 bits).
  const randomness = BigInt(`0x${run.traceId.slice(-14)}`);
  return { sampled: randomness >= threshold, warning };
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}
