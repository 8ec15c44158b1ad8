// What the standard OTEL_* environment asks of delta's traces: whether to export live, where, how, and what must stay secret.
import { OTLP_HEADER_VARIABLES } from "../process/child-env.js";

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface LiveExportSettings {
  /** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  protocol: OtlpProtocol;
  /** The longest the engine waits at exit for its spans to be sent (OTEL_EXPORTER_OTLP_TIMEOUT, default 10 s). */
  flushMs: number;
  captureContent: boolean;
}

export type LiveExportChoice = { kind: "off" } | { kind: "on"; settings: LiveExportSettings } | { kind: "refused"; warning: string };

const DEFAULT_TIMEOUT_MS = 10_000;

/** OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: content goes on spans only when it says true. */
export function captureContentOf(env: NodeJS.ProcessEnv): boolean {
  return env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true";
}

/** Decides from the environment alone (nothing is loaded) whether this process exports its spans as it runs. `sampled`: the caller's TRACEPARENT flag, when it gave one. */
export function liveExportChoice(env: NodeJS.ProcessEnv, sampled: boolean | null): LiveExportChoice {
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (tracesEndpoint === null && endpoint === null) return { kind: "off" };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return { kind: "off" };
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "otlp").split(",").map((name) => name.trim().toLowerCase());
  if (exporters.includes("none") || !exporters.includes("otlp")) return { kind: "off" };
  if (sampled === false || samplerOff(env, sampled)) return { kind: "off" };
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
  };
}

/** The values of OTLP header variables (`k=v,k2=v2`, values percent-decoded): strings that must never reach a run's files. */
export function otlpHeaderSecrets(env: NodeJS.ProcessEnv): string[] {
  return OTLP_HEADER_VARIABLES.flatMap((name) => {
    const raw = env[name];
    if (!raw) return [];
    return [raw, ...raw.split(",").flatMap((pair) => {
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

/** OTEL_TRACES_SAMPLER values that record nothing here: always_off, and parentbased_always_off without a sampled caller. */
function samplerOff(env: NodeJS.ProcessEnv, sampled: boolean | null): boolean {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase();
  return sampler === "always_off" || (sampler === "parentbased_always_off" && sampled !== true);
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}
