// Spans of a long run go to a collector as they are folded: `continue` with live export streams the journal's earlier
// events from disk to rebuild the fold, and `delta export --otlp` sends batches as the journal streams past.
//
// The journal is a long run's (a CONTEXT_WINDOW every ten iterations of 16 KB tool results), three times the heap each
// command is given: an engine that held the journal's events, or the spans of the run with their content, runs out of memory.
import { expect, it } from "vitest";
import { LONG_RUN, setUpLongRun } from "../support/long-run-journal.js";
import { startOtlpCollector } from "../support/otlp-collector.js";
import { delta } from "./harness.js";

const long = setUpLongRun();

it("continue with live export folds the journal's earlier events from disk and sends only its own spans, under a third of the journal's heap", async () => {
  expect(long.journalBytes).toBeGreaterThan(3 * LONG_RUN.heapMb * 2 ** 20);
  const collector = await startOtlpCollector();
  try {
    const continued = await delta(["continue", "--run-id", "long", "-w", long.ws, "-m", "now the index"], { env: long.heapCapped({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "10000" }), timeoutMs: 120_000 });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(continued.stderr).not.toMatch(/could not export/);
    const spans = collector.spans();
    // This invocation's: its own span and its one model call, the chat span under it; none of the earlier 5,000 iterations'.
    const chats = spans.filter((span) => span.name.startsWith("chat"));
    expect(chats).toHaveLength(1);
    expect(spans.filter((span) => span.name.startsWith("execute_tool"))).toHaveLength(0);
    const invocation = spans.find((span) => span.spanId === chats[0]!.parentSpanId);
    expect(invocation?.name).toMatch(/^invoke_agent/);
  } finally {
    await collector.close();
  }
}, 180_000);

it("export --otlp sends a long run's spans with their content in batches as the journal streams, under a third of the journal's heap", async () => {
  const collector = await startOtlpCollector();
  try {
    const exported = await delta(["export", "long", "-w", long.ws, "--otlp", "--endpoint", collector.endpoint], { env: long.heapCapped({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "100" }), timeoutMs: 120_000 });
    expect(exported.exitCode, exported.stderr).toBe(0);
    const spans = collector.spans();
    expect(exported.stderr).toContain(`Sent ${spans.length} spans to ${collector.endpoint}/v1/traces`);
    // Every tool call's span, each with its 16 KB result, in requests of at most a batch.
    const tools = spans.filter((span) => span.name.startsWith("execute_tool"));
    expect(tools).toHaveLength(LONG_RUN.iterations);
    expect(String(tools.at(-1)!.attributes["gen_ai.tool.call.result"]).length).toBeGreaterThanOrEqual(LONG_RUN.resultBytes);
    expect(new Set(spans.map((span) => span.spanId)).size).toBe(spans.length);
    expect(collector.requests()).toBeGreaterThanOrEqual(Math.ceil(spans.length / 100));
    expect(Math.max(...collector.exports.map((received) => received.spans.length))).toBeLessThanOrEqual(100);
  } finally {
    await collector.close();
  }
}, 180_000);

it("export --otlp to a collector answering 503 stops at the first batch, exit 1, saying how many spans went before", async () => {
  const collector = await startOtlpCollector("unavailable");
  try {
    const exported = await delta(["export", "long", "-w", long.ws, "--otlp", "--endpoint", collector.endpoint], { env: long.heapCapped({ OTEL_EXPORTER_OTLP_TIMEOUT: "2000" }), timeoutMs: 60_000 });
    expect(exported.exitCode).toBe(1);
    expect(exported.stderr).toContain(`Could not send the spans to ${collector.endpoint}/v1/traces (0 sent before it stopped)`);
    // The run's 10,000 spans and more would be twenty batches: only the first was tried (with the exporter's own retries).
    expect(collector.requests()).toBeGreaterThan(0);
    expect(collector.requests()).toBeLessThan(10);
  } finally {
    await collector.close();
  }
}, 120_000);
