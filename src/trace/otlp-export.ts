// Sends the fold's spans over OTLP/HTTP (live as a run goes, or afterwards) and writes them as OTLP JSON, through the official SDK loaded on first use.
import { ENGINE_VERSION } from "../engine-version.js";
import { errorMessage } from "../errors.js";
import type { JournalEvent } from "../journal/events.js";
import type { ReadableSpan, SpanExporter } from "./otel-sdk.js";
import { batchBoundsOf, type LiveExportSettings, type OtlpProtocol } from "./otel-env.js";
import { createSpanFold, type Attributes, type TraceSpan } from "./span-fold.js";

type Sdk = typeof import("./otel-sdk.js");

const SPAN_KIND = { INTERNAL: 0, CLIENT: 2 } as const;
const STATUS_CODE = { UNSET: 0, OK: 1, ERROR: 2 } as const;

/**
 * The resource a span carries: service.name (OTEL_SERVICE_NAME, else `delta`), service.version, host.name (the host its
 * invocation ran on, as its ENGINE_START journaled it: the same live or exported later, elsewhere), then OTEL_RESOURCE_ATTRIBUTES.
 */
function resourceAttributes(env: NodeJS.ProcessEnv, hostName: string | null): Attributes {
  const given: Attributes = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      given[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      continue;
    }
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || (typeof given["service.name"] === "string" ? given["service.name"] : "delta");
  return { "service.version": ENGINE_VERSION, ...(hostName !== null ? { "host.name": hostName } : {}), ...given, "service.name": serviceName };
}

type Resource = ReturnType<Sdk["resourceFromAttributes"]>;

/** One resource per host, so the SDK groups the spans of each host under one ResourceSpans. */
function resourcesOf(sdk: Sdk, env: NodeJS.ProcessEnv): (span: TraceSpan) => Resource {
  const made = new Map<string | null, Resource>();
  return (span) => {
    let resource = made.get(span.hostName);
    if (resource === undefined) made.set(span.hostName, (resource = sdk.resourceFromAttributes(resourceAttributes(env, span.hostName))));
    return resource;
  };
}

function toReadable(span: TraceSpan, resource: Resource): ReadableSpan {
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: 1 };
  return {
    name: span.name,
    kind: SPAN_KIND[span.kind],
    spanContext: () => context,
    ...(span.parentSpanId ? { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: 1, isRemote: true } } : {}),
    startTime: hrTime(span.startMs),
    endTime: hrTime(span.endMs),
    duration: hrTime(span.endMs - span.startMs),
    status: { code: STATUS_CODE[span.status.code], ...(span.status.message !== undefined ? { message: span.status.message } : {}) },
    attributes: span.attributes,
    links: span.links.map((link) => ({ context: { traceId: link.traceId, spanId: link.spanId, traceFlags: 1 } })),
    events: span.events.map((event) => ({ name: event.name, time: hrTime(event.timeMs), attributes: event.attributes })),
    ended: true,
    resource,
    instrumentationScope: { name: "delta", version: ENGINE_VERSION, schemaUrl: undefined },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as ReadableSpan;
}

/** Epoch milliseconds (fractions kept to the microsecond) as [seconds, nanoseconds]. */
function hrTime(ms: number): [number, number] {
  const micros = Math.round(ms * 1000);
  const seconds = Math.floor(micros / 1_000_000);
  return [seconds, (micros - seconds * 1_000_000) * 1000];
}

/** Turns spans into one OTLP/JSON ExportTraceServiceRequest, exactly as the SDK's JSON exporter would send them (the SDK loaded once, first). */
export async function otlpJsonSerializer(env: NodeJS.ProcessEnv): Promise<(spans: readonly TraceSpan[]) => string> {
  const sdk = await import("./otel-sdk.js");
  const resource = resourcesOf(sdk, env);
  const decoder = new TextDecoder();
  return (spans) => decoder.decode(sdk.JsonTraceSerializer.serializeRequest(spans.map((span) => toReadable(span, resource(span)))));
}

interface Destination {
  url: string;
  protocol: OtlpProtocol;
  timeoutMs: number;
}

/** The SDK exporter for a destination; OTEL_EXPORTER_OTLP_HEADERS are read by the SDK from the environment and go nowhere else. */
function exporterFor(sdk: Sdk, destination: Destination): SpanExporter {
  const config = { url: destination.url, timeoutMillis: destination.timeoutMs };
  return destination.protocol === "http/json" ? new sdk.OtlpJsonExporter(config) : new sdk.OtlpProtoExporter(config);
}

/** Sends spans once (`delta export --otlp`); the reason they could not be sent, or null. */
export async function sendSpans(spans: readonly TraceSpan[], destination: Destination, env: NodeJS.ProcessEnv): Promise<string | null> {
  const sdk = await import("./otel-sdk.js");
  const resource = resourcesOf(sdk, env);
  const exporter = exporterFor(sdk, destination);
  const sent = new Promise<string | null>((done) => {
    exporter.export(spans.map((span) => toReadable(span, resource(span))), (result) =>
      done(result.code === sdk.ExportResultCode.SUCCESS ? null : errorMessage(result.error ?? "the collector refused the spans")));
  });
  const failure = await withinBound(sent, destination.timeoutMs + 1000);
  void exporter.shutdown().catch(() => {});
  return failure === TIMED_OUT ? `no answer from ${destination.url} within ${destination.timeoutMs} ms` : failure;
}

/** A run's spans exported as they end: the journal's events go in, spans go out in batches. */
export interface LiveTrace {
  /** Folds one event this process appended. */
  push(event: JournalEvent): void;
  /** Sends what is left, waiting at most the flush bound; returns one warning line when spans could not be sent, else null. */
  flush(): Promise<string | null>;
}

interface LiveTraceOptions {
  settings: LiveExportSettings;
  env: NodeJS.ProcessEnv;
  /** The run's journal before this process's first event: folded so ids and open spans match, not sent again. */
  earlier: readonly JournalEvent[];
  secrets: readonly string[];
}

/**
 * Folds from the start; the SDK is loaded when the first span ends (after the first model call), so a run with
 * export on reaches its model as soon as one with export off. Spans ended before it is loaded wait for it.
 */
export function startLiveTrace(options: LiveTraceOptions): LiveTrace {
  const { settings } = options;
  const fold = createSpanFold({ captureContent: settings.captureContent, secrets: options.secrets });
  for (const event of options.earlier) fold.push(event);
  let failure: string | null = null;
  let waiting: TraceSpan[] = [];
  let loading: Promise<(span: TraceSpan) => void> | null = null;
  let processor: InstanceType<Sdk["BatchSpanProcessor"]> | null = null;
  let send: ((span: TraceSpan) => void) | null = null;
  const load = (): Promise<(span: TraceSpan) => void> =>
    (loading ??= import("./otel-sdk.js").then((sdk) => {
      const resource = resourcesOf(sdk, options.env);
      const inner = exporterFor(sdk, { url: settings.url, protocol: settings.protocol, timeoutMs: settings.flushMs });
      // The exporter's verdicts are kept here: a dead collector becomes one warning at exit, never a line per batch.
      const exporter: SpanExporter = {
        export: (spans, done) =>
          inner.export(spans, (result) => {
            if (result.code !== sdk.ExportResultCode.SUCCESS) failure ??= errorMessage(result.error ?? "the collector refused the spans");
            done(result);
          }),
        shutdown: () => inner.shutdown(),
        forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
      };
      const batches = new sdk.BatchSpanProcessor(exporter, batchBoundsOf(options.env));
      processor = batches;
      send = (span) => batches.onEnd(toReadable(span, resource(span)));
      for (const span of waiting) send(span);
      waiting = [];
      return send;
    }));
  return {
    push: (event) => {
      for (const span of fold.push(event)) {
        if (send) send(span);
        else {
          waiting.push(span);
          void load().catch((err: unknown) => (failure ??= errorMessage(err)));
        }
      }
    },
    flush: async () => {
      if (loading === null) return null;
      const deadline = Date.now() + settings.flushMs;
      const loaded = await withinBound(loading.then(() => null, (err: unknown) => errorMessage(err)), settings.flushMs);
      const running = processor as InstanceType<Sdk["BatchSpanProcessor"]> | null;
      const flushed = loaded === TIMED_OUT || running === null
        ? loaded
        : await withinBound(running.forceFlush().then(() => null, (err: unknown) => errorMessage(err)), Math.max(0, deadline - Date.now()));
      void running?.shutdown().catch(() => {});
      const reason = flushed === TIMED_OUT ? `no answer within ${settings.flushMs} ms (OTEL_EXPORTER_OTLP_TIMEOUT)` : (failure ?? flushed);
      return reason === null ? null : `[warning] could not export the run's spans to ${settings.url}: ${reason}; they are in the journal: delta export --otlp sends them again`;
    },
  };
}

const TIMED_OUT = Symbol("timed out");

async function withinBound<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<typeof TIMED_OUT>((done) => {
    timer = setTimeout(() => done(TIMED_OUT), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, bound]);
  } finally {
    clearTimeout(timer);
  }
}

