// The parts of the OpenTelemetry SDK delta uses, in one module: the build bundles it on its own (dist/delta-otel-sdk.cjs), loaded only when spans are exported.
export { OTLPTraceExporter as OtlpProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
export { OTLPTraceExporter as OtlpJsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
export { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
export type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
export { resourceFromAttributes } from "@opentelemetry/resources";
export { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
export { ExportResultCode } from "@opentelemetry/core";
export { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
