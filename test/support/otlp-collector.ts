// A loopback OTLP/HTTP trace collector for tests: decodes protobuf with the official OTLP .proto files (loaded by protobufjs) and OTLP/JSON, or plays a dead collector.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import protobuf from "protobufjs";

/** An attribute value as both encodings carry it: ints as numbers, arrays as arrays. */
export type Value = string | number | boolean | Value[] | null;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, Value>;
  events: { name: string; timeUnixNano: string; attributes: Record<string, Value> }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message: string };
}

export interface ReceivedExport {
  contentType: string;
  headers: IncomingHttpHeaders;
  resource: Record<string, Value>;
  spans: ReceivedSpan[];
}

export type CollectorBehaviour = "accept" | "unavailable" | "silent";

export interface OtlpCollector {
  /** e.g. "http://127.0.0.1:4318" — what OTEL_EXPORTER_OTLP_ENDPOINT should be. */
  readonly endpoint: string;
  readonly exports: ReceivedExport[];
  /** Requests it saw, whatever it answered (a dead collector still counts them). */
  requests(): number;
  spans(): ReceivedSpan[];
  close(): Promise<void>;
}

/** The OTLP definitions the OpenTelemetry project publishes (test/fixtures/otlp-proto/README.md says from where). */
const protoDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "otlp-proto");
let requestType: protobuf.Type | undefined;

/** ExportTraceServiceRequest from the OTLP definitions the OpenTelemetry project publishes. */
function exportRequestType(): protobuf.Type {
  if (requestType) return requestType;
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (target.startsWith(protoDir) ? target : join(protoDir, target));
  root.loadSync(join(protoDir, "opentelemetry/proto/collector/trace/v1/trace_service.proto"));
  requestType = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  return requestType;
}

export async function startOtlpCollector(behaviour: CollectorBehaviour = "accept"): Promise<OtlpCollector> {
  const exports: ReceivedExport[] = [];
  const sockets = new Set<Socket>();
  let seen = 0;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      seen += 1;
      if (behaviour === "silent") return;
      if (behaviour === "unavailable") return answer(response, 503, "collector unavailable");
      if (request.url !== "/v1/traces") return answer(response, 404, "not the traces path");
      const contentType = String(request.headers["content-type"] ?? "");
      try {
        const body = Buffer.concat(chunks);
        const decoded = contentType.includes("json") ? (JSON.parse(body.toString("utf8")) as OtlpRequest) : fromProtobuf(body);
        for (const resourceSpans of decoded.resourceSpans ?? []) {
          exports.push({
            contentType,
            headers: request.headers,
            resource: attributesOf(resourceSpans.resource?.attributes),
            spans: (resourceSpans.scopeSpans ?? []).flatMap((scope) => (scope.spans ?? []).map(spanOf)),
          });
        }
        answer(response, 200, contentType.includes("json") ? "{}" : "");
      } catch (err) {
        answer(response, 400, String(err));
      }
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    exports,
    requests: () => seen,
    spans: () => exports.flatMap((received) => received.spans),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function answer(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { "content-type": body.startsWith("{") ? "application/json" : "text/plain" });
  response.end(body);
}

interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}
interface OtlpKeyValue {
  key: string;
  value?: OtlpAnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: OtlpKeyValue[];
  events?: { name: string; timeUnixNano: string | number; attributes?: OtlpKeyValue[] }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}

/** Protobuf decoded into the shape OTLP/JSON has: ids as hex, 64-bit numbers as strings. */
function fromProtobuf(body: Buffer): OtlpRequest {
  const type = exportRequestType();
  const object = type.toObject(type.decode(body), { longs: String, enums: Number, bytes: String, defaults: false }) as OtlpRequest;
  const hex = (base64: string | undefined): string => Buffer.from(base64 ?? "", "base64").toString("hex");
  for (const resourceSpans of object.resourceSpans ?? []) {
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
        for (const link of span.links ?? []) {
          link.traceId = hex(link.traceId);
          link.spanId = hex(link.spanId);
        }
      }
    }
  }
  return object;
}

function valueOf(value: OtlpAnyValue | undefined): Value {
  if (value === undefined) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return null;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, Value> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

function spanOf(span: OtlpSpan): ReceivedSpan {
  return {
    traceId: span.traceId.toLowerCase(),
    spanId: span.spanId.toLowerCase(),
    parentSpanId: (span.parentSpanId ?? "").toLowerCase(),
    name: span.name,
    kind: span.kind ?? 0,
    startTimeUnixNano: String(span.startTimeUnixNano),
    endTimeUnixNano: String(span.endTimeUnixNano),
    attributes: attributesOf(span.attributes),
    events: (span.events ?? []).map((event) => ({ name: event.name, timeUnixNano: String(event.timeUnixNano), attributes: attributesOf(event.attributes) })),
    links: (span.links ?? []).map((link) => ({ traceId: link.traceId.toLowerCase(), spanId: link.spanId.toLowerCase() })),
    status: { code: span.status?.code ?? 0, message: span.status?.message ?? "" },
  };
}

/** Spans in a stable order (by span id), for comparing two exports whole. */
export function sortedSpans(spans: readonly ReceivedSpan[]): ReceivedSpan[] {
  return [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId));
}
