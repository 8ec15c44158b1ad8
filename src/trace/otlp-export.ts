// Sends the fold's spans over OTLP/HTTP (live as a run goes, or afterwards) and writes them as OTLP JSON, through the official SDK loaded on first use.
import type { Agent } from "node:http";
import type { Socket } from "node:net";
import { ENGINE_VERSION } from "../engine-version.js";
import { errorMessage } from "../errors.js";
import { withoutUrlCredentials } from "../secrets.js";
import type { JournalEvent } from "../journal/events.js";
import { streamJournal } from "../journal/reader.js";
import type { ReadableSpan, SpanExporter } from "./otel-sdk.js";
import { batchBoundsOf, type LiveExportSettings, type OtlpProtocol } from "./otel-env.js";
import { createSpanFold, foldJournalSpansPaced, type Attributes, type JournalSpanOptions, type TraceSpan } from "./span-fold.js";

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

/**
 * The exporter's connections to its collector, watched: whether the last one failed before it was made (refused, no such
 * host, unreachable). The SDK retries such a failure for up to its whole timeout (five tries, 1 s apart and more); whoever
 * waits on the exporter — a run's flush at exit, `delta export --otlp` — gives up at that first failure instead.
 */
interface ConnectionWatch {
  /** The SDK's agent factory (`httpAgentOptions`): keep-alive agents, as the SDK's own, whose sockets are watched. */
  agentFor(protocol: string): Promise<Agent>;
  /** Resolves with why, once a connection fails before it is made: at once if the last one did; never otherwise. */
  unreachable(): Promise<string>;
}

function watchConnections(): ConnectionWatch {
  let failure: string | null = null;
  const waiting: ((reason: string) => void)[] = [];
  const watch = (socket: Socket): void => {
    let connected = false;
    socket.once("connect", () => {
      connected = true;
      failure = null;
    });
    socket.once("error", (err: Error) => {
      if (connected) return;
      failure = errorMessage(err);
      for (const done of waiting.splice(0)) done(failure);
    });
  };
  return {
    agentFor: async (protocol) => {
      const { Agent: AgentOf } = protocol === "https:" ? await import("node:https") : await import("node:http");
      const agent = new AgentOf({ keepAlive: true });
      const connect = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket;
      agent.createConnection = ((...args: unknown[]) => {
        const socket = connect(...args);
        watch(socket);
        return socket;
      }) as Agent["createConnection"];
      return agent;
    },
    unreachable: () => (failure !== null ? Promise.resolve(failure) : new Promise((done) => waiting.push(done))),
  };
}

/** The SDK exporter for a destination; OTEL_EXPORTER_OTLP_HEADERS are read by the SDK from the environment and go nowhere else. */
function exporterFor(sdk: Sdk, destination: Destination, connections: ConnectionWatch): SpanExporter {
  const config = { url: destination.url, timeoutMillis: destination.timeoutMs, httpAgentOptions: connections.agentFor };
  return destination.protocol === "http/json" ? new sdk.OtlpJsonExporter(config) : new sdk.OtlpProtoExporter(config);
}

/** What `delta export --otlp` sent: the spans the collector took, and why it stopped early (null when every span went). */
interface Sent {
  spans: number;
  failure: string | null;
}

/**
 * Sends the spans of `journals` once (`delta export --otlp`): each journal folded as it streams, its spans sent in batches of
 * OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512) as they fill, the fold waiting for each answer: what is held is a batch and a window
 * of the journal, whatever the runs' size. The first batch the collector refuses, or does not answer in time, ends the export.
 */
export async function sendJournalSpans(journals: readonly string[], destination: Destination, env: NodeJS.ProcessEnv, options: JournalSpanOptions): Promise<Sent> {
  const sdk = await import("./otel-sdk.js");
  const resource = resourcesOf(sdk, env);
  const connections = watchConnections();
  const exporter = exporterFor(sdk, destination, connections);
  const batchSize = batchBoundsOf(env).maxExportBatchSize ?? DEFAULT_BATCH_SPANS;
  const sent: Sent = { spans: 0, failure: null };
  let batch: TraceSpan[] = [];
  /** Sends the spans folded so far, a full batch at a time (`all`: the last, short one too); false once a batch failed. */
  const drain = async (all: boolean): Promise<boolean> => {
    while (sent.failure === null && (batch.length >= batchSize || (all && batch.length > 0))) {
      const spans = batch.slice(0, batchSize);
      batch = batch.slice(batchSize);
      const answer = new Promise<string | null>((done) => {
        exporter.export(spans.map((span) => toReadable(span, resource(span))), (result) =>
          done(result.code === sdk.ExportResultCode.SUCCESS ? null : errorMessage(result.error ?? "the collector refused the spans")));
      });
      const failure = await withinBound(Promise.race([answer, connections.unreachable()]), destination.timeoutMs + 1000);
      if (failure === null) sent.spans += spans.length;
      else sent.failure = failure === TIMED_OUT ? `no answer from ${withoutUrlCredentials(destination.url)} within ${destination.timeoutMs} ms` : failure;
    }
    return sent.failure === null;
  };
  try {
    for (const journal of journals) {
      await foldJournalSpansPaced(journal, options, (span) => batch.push(span), async () => {
        if (!(await drain(false))) throw STOPPED;
      });
      // A workspace of short runs fills its batches between journals.
      if (!(await drain(false))) return sent;
    }
    await drain(true);
  } catch (err) {
    if (err !== STOPPED) throw err;
  } finally {
    void exporter.shutdown().catch(() => {});
  }
  return sent;
}

/** The SDK's own default batch size (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
const DEFAULT_BATCH_SPANS = 512;
/** Thrown through the journal's fold to end it once a batch could not be sent. */
const STOPPED = Symbol("stopped");

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
  /** The run's journal on disk, streamed once now: its events before `fromSeq` are folded so ids and open spans match, not sent again; those from `fromSeq` on are this process's, and sent. */
  journal: string;
  fromSeq: number;
  secrets: readonly string[];
}

/**
 * Folds from the journal's start, streamed from disk (a line held at a time, never the journal); the SDK is loaded when the first span ends (after the first model call), so a run with
 * export on reaches its model as soon as one with export off. Spans ended before it is loaded wait for it.
 */
export function startLiveTrace(options: LiveTraceOptions): LiveTrace {
  const { settings } = options;
  const fold = createSpanFold({ captureContent: settings.captureContent, secrets: options.secrets });
  let failure: string | null = null;
  let waiting: TraceSpan[] = [];
  let loading: Promise<(span: TraceSpan) => void> | null = null;
  let processor: InstanceType<Sdk["BatchSpanProcessor"]> | null = null;
  let send: ((span: TraceSpan) => void) | null = null;
  const connections = watchConnections();
  const load = (): Promise<(span: TraceSpan) => void> =>
    (loading ??= import("./otel-sdk.js").then((sdk) => {
      const resource = resourcesOf(sdk, options.env);
      const inner = exporterFor(sdk, { url: settings.url, protocol: settings.protocol, timeoutMs: settings.flushMs }, connections);
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
  const push = (event: JournalEvent): void => {
    for (const span of fold.push(event)) {
      if (send) send(span);
      else {
        waiting.push(span);
        void load().catch((err: unknown) => (failure ??= errorMessage(err)));
      }
    }
  };
  streamJournal(options.journal, (event) => (event.seq < options.fromSeq ? void fold.push(event) : push(event)));
  return {
    push,
    flush: async () => {
      if (loading === null) return null;
      const deadline = Date.now() + settings.flushMs;
      const loaded = await withinBound(loading.then(() => null, (err: unknown) => errorMessage(err)), settings.flushMs);
      const running = processor as InstanceType<Sdk["BatchSpanProcessor"]> | null;
      // A collector that refused the connection (or cannot be reached) is not waited for: the SDK would try again for the whole bound.
      const flushed = loaded === TIMED_OUT || running === null
        ? loaded
        : await withinBound(Promise.race([running.forceFlush().then(() => null, (err: unknown) => errorMessage(err)), connections.unreachable()]), Math.max(0, deadline - Date.now()));
      void running?.shutdown().catch(() => {});
      const reason = flushed === TIMED_OUT ? `no answer within ${settings.flushMs} ms (OTEL_EXPORTER_OTLP_TIMEOUT)` : (failure ?? flushed);
      return reason === null ? null : `[warning] could not export the run's spans to ${withoutUrlCredentials(settings.url)}: ${reason}; they are in the journal: delta export --otlp sends them again`;
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

