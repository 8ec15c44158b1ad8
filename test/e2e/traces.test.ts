// OpenTelemetry traces end to end: live export to a loopback OTLP/HTTP collector, the same spans from `delta export`, ids, content, secrets and dead collectors.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleProbe } from "../support/bundle-probe.js";
import { filesystemServer, stdioServerYaml } from "../support/mcp-servers.js";
import { fault, reply, startMockLlm, type Step } from "../support/mock-llm.js";
import { sortedSpans, startOtlpCollector, type ReceivedSpan } from "../support/otlp-collector.js";
import { collectFiles, delta, DELTA_BIN, journalHas, modelEnv, readEvents, runDir, spawnDelta, waitFor, writeAgent, setUpE2e } from "./harness.js";

const TOOLS = `tools:
  - name: echo
    exec: "echo \${text}"
  - name: show_env
    shell: 'echo "traceparent=[$TRACEPARENT] headers=[$OTEL_EXPORTER_OTLP_HEADERS]"'
  - name: slow
    shell: "sleep 30"
`;
const HEADER_SECRET = "otlp-header-secret-7f3a9c";

const { root } = setUpE2e("delta-traces-");
let agent: string;
beforeAll(() => {
  agent = writeAgent(root, { tools: TOOLS });
});

interface RunResultJson {
  status: string;
  trace_id: string | null;
  result?: unknown;
  metrics: { iterations: number; usage: unknown };
}

async function runAgainst(steps: Step[], args: string[], env: Record<string, string>): Promise<{ exitCode: number; result: RunResultJson; stderr: string }> {
  const server = await startMockLlm(steps);
  try {
    const result = await delta([...args, "--format", "json"], { env: modelEnv(server.baseUrl, env), timeoutMs: 60_000 });
    return { exitCode: result.exitCode, result: JSON.parse(result.stdout) as RunResultJson, stderr: result.stderr };
  } finally {
    await server.close();
  }
}

const byName = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((span) => span.attributes["gen_ai.operation.name"] === name);

describe("a run's trace", () => {
  it("a run with tool calls, a retried model call, an ask_human and a continue: live spans, exported spans and the OTLP/JSON file are the same, and tell the run", async () => {
    const live = await startOtlpCollector();
    const ws = join(root, "ws-whole");
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: live.endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "5000" };
    try {
      const first = await runAgainst(
        [
          reply.toolCalls([{ name: "echo", arguments: { text: "secret-ish content" } }, { name: "show_env", arguments: {} }]),
          fault.status(503, { message: "busy" }),
          reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which colour?" } }]),
        ],
        ["run", "--agent", agent, "-w", ws, "--run-id", "whole", "-m", "go"],
        otel,
      );
      expect(first.exitCode, first.stderr).toBe(101);
      const caller = { trace: "0af7651916cd43dd8448eb211c80319c", span: "b7ad6b7169203331" };
      const second = await runAgainst([reply.text("green it is")], ["continue", "--run-id", "whole", "-w", ws, "-m", "green"], { ...otel, TRACEPARENT: `00-${caller.trace}-${caller.span}-01` });
      expect(second.exitCode, second.stderr).toBe(0);
      expect(first.result.trace_id).toMatch(/^[0-9a-f]{32}$/);
      expect(second.result.trace_id).toBe(first.result.trace_id);

      const spans = live.spans();
      const traceId = first.result.trace_id!;
      expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
      const invocations = byName(spans, "invoke_agent");
      expect(invocations).toHaveLength(2);
      for (const span of invocations) {
        expect(span.attributes).toMatchObject({ "gen_ai.agent.name": "test-agent", "gen_ai.conversation.id": "whole" });
        expect(span.parentSpanId).toBe("");
      }
      const [run, resumed] = [...invocations].sort((a, b) => Number(a.attributes["delta.invocation"]) - Number(b.attributes["delta.invocation"]));
      const chats = byName(spans, "chat");
      expect(chats).toHaveLength(3);
      for (const chat of chats) expect(chat.attributes).toMatchObject({ "gen_ai.request.model": "mock-model", "gen_ai.provider.name": "openai" });
      const retried = chats.filter((chat) => chat.events.some((event) => event.name === "delta.llm.attempt_failed"));
      expect(retried).toHaveLength(1);
      expect(retried[0]!.events[0]!.attributes).toMatchObject({ "delta.attempt": 1, "http.response.status_code": 503 });
      expect(retried[0]!.parentSpanId).toBe(run!.spanId);
      expect(chats.filter((chat) => chat.parentSpanId === resumed!.spanId)).toHaveLength(1);
      // A TRACEPARENT given to continue is a link, not a new trace.
      expect(resumed!.links).toEqual([{ traceId: caller.trace, spanId: caller.span }]);
      expect(run!.links).toEqual([]);
      const tools = byName(spans, "execute_tool");
      expect(tools.map((span) => span.attributes["gen_ai.tool.name"]).sort()).toEqual(["ask_human", "echo", "show_env"]);
      for (const tool of tools) expect(tool.parentSpanId).toBe(run!.spanId);
      const waits = spans.filter((span) => span.name === "ask_human");
      expect(waits).toHaveLength(1);
      expect(resumed!.events.map((event) => event.name)).toEqual(expect.arrayContaining(["delta.human_input.received", "delta.tool.result"]));
      // No content unless asked for.
      for (const span of spans) expect(Object.keys(span.attributes).filter((key) => key.endsWith(".messages") || key.startsWith("gen_ai.tool.call.a") || key.startsWith("gen_ai.tool.call.r"))).toEqual([]);
      expect(JSON.stringify(spans)).not.toContain("secret-ish content");

      // The tool ran with TRACEPARENT naming its own span.
      const showEnv = tools.find((span) => span.attributes["gen_ai.tool.name"] === "show_env")!;
      const observation = readEvents(ws, "whole").find((event) => event.type === "ACTION_RESULT" && event.tool_name === "show_env");
      expect(observation).toMatchObject({ observation_content: expect.stringContaining(`traceparent=[00-${traceId}-${showEnv.spanId}-01]`) });

      // `delta export --otlp` sends the same spans again, whole; so does the OTLP/JSON file.
      const again = await startOtlpCollector();
      const fromFile = await startOtlpCollector();
      try {
        const exported = await delta(["export", "whole", "-w", ws, "--otlp", "--endpoint", again.endpoint]);
        expect(exported.exitCode, exported.stderr).toBe(0);
        expect(sortedSpans(again.spans())).toEqual(sortedSpans(spans));
        expect(again.exports[0]!.contentType).toContain("protobuf");
        const file = join(root, "whole.json");
        const written = await delta(["export", "whole", "-w", ws, "--format", "otlp-json", "-o", file]);
        expect(written.exitCode, written.stderr).toBe(0);
        await fetch(`${fromFile.endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: readFileSync(file) });
        expect(sortedSpans(fromFile.spans())).toEqual(sortedSpans(spans));
        expect(fromFile.exports[0]!.resource).toMatchObject({ "service.name": "delta" });
        expect(live.exports[0]!.resource).toMatchObject({ "service.name": "delta" });
      } finally {
        await again.close();
        await fromFile.close();
      }

      // Content when asked for: messages, arguments and results.
      const withContent = await delta(["export", "whole", "-w", ws, "--format", "otlp-json"], { env: { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" } });
      expect(withContent.stdout).toContain("gen_ai.tool.call.arguments");
      expect(withContent.stdout).toContain("secret-ish content");
      expect(withContent.stdout).toContain("gen_ai.output.messages");
    } finally {
      await live.close();
    }
  }, 120_000);

  it("two runs with the same run id in two workspaces get different trace ids; a caller's TRACEPARENT becomes the trace and the parent", async () => {
    const a = await runAgainst([reply.text("a")], ["run", "--agent", agent, "-w", join(root, "ws-a"), "--run-id", "same", "-m", "go"], {});
    const b = await runAgainst([reply.text("b")], ["run", "--agent", agent, "-w", join(root, "ws-b"), "--run-id", "same", "-m", "go"], {});
    expect(a.result.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(b.result.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(a.result.trace_id).not.toBe(b.result.trace_id);

    // A workspace's export holds every run of it, each its own trace.
    const other = await runAgainst([reply.text("o")], ["run", "--agent", agent, "-w", join(root, "ws-a"), "--run-id", "other", "-m", "go"], {});
    const workspace = await delta(["export", "-w", join(root, "ws-a"), "--format", "otlp-json"]);
    expect(workspace.exitCode, workspace.stderr).toBe(0);
    expect(workspace.stdout).toContain(`"traceId":"${a.result.trace_id}"`);
    expect(workspace.stdout).toContain(`"traceId":"${other.result.trace_id}"`);
    expect(workspace.stdout).not.toContain(`"traceId":"${b.result.trace_id}"`);

    const parent = { trace: "4bf92f3577b34da6a3ce929d0e0e4736", span: "00f067aa0ba902b7" };
    const ws = join(root, "ws-parent");
    const child = await runAgainst([reply.text("c")], ["run", "--agent", agent, "-w", ws, "--run-id", "child", "-m", "go"], { TRACEPARENT: `00-${parent.trace}-${parent.span}-01` });
    expect(child.result.trace_id).toBe(parent.trace);
    const exported = await delta(["export", "child", "-w", ws, "--format", "otlp-json"]);
    expect(exported.stdout).toContain(`"parentSpanId":"${parent.span}"`);
    const shown = await delta(["show", "child", "-w", ws]);
    expect(shown.stdout).toContain(parent.trace);
  }, 60_000);

  it("the exporter's header value reaches the collector and nowhere else: not the journal, not the run's files, not a tool", async () => {
    const collector = await startOtlpCollector();
    const ws = join(root, "ws-header");
    try {
      const run = await runAgainst(
        // The model repeats the value (as a model that saw it somewhere might): every file must still be without it.
        [reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text(`done, and the key is ${HEADER_SECRET}`)],
        ["run", "--agent", agent, "-w", ws, "--run-id", "header", "-m", `go`],
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${HEADER_SECRET}` },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(collector.exports[0]!.headers["x-api-key"]).toBe(HEADER_SECRET);
      expect(run.stderr).not.toContain(HEADER_SECRET);
      expect(JSON.stringify(run.result)).not.toContain(HEADER_SECRET);
      expect(JSON.stringify(collector.spans())).not.toContain(HEADER_SECRET);
      const observation = readEvents(ws, "header").find((event) => event.type === "ACTION_RESULT");
      expect(observation).toMatchObject({ observation_content: expect.stringContaining("headers=[]") });
      for (const file of collectFiles(runDir(ws, "header"))) expect(readFileSync(file, "utf8"), file).not.toContain(HEADER_SECRET);
    } finally {
      await collector.close();
    }
  }, 60_000);
  it("a tool gets the exporter's headers when env_passthrough names them, and the run's files still never hold them", async () => {
    const collector = await startOtlpCollector();
    const ws = join(root, "ws-header-passed");
    mkdirSync(ws, { recursive: true });
    const passing = writeAgent(
      root,
      { tools: `tools:\n  - name: keep_headers\n    shell: 'printf %s "$OTEL_EXPORTER_OTLP_HEADERS" > seen-headers.txt; echo "kept [$OTEL_EXPORTER_OTLP_HEADERS]"'\nenv_passthrough: [OTEL_EXPORTER_OTLP_HEADERS]\n` },
      "agent-header-passed",
    );
    try {
      const run = await runAgainst(
        [reply.toolCalls([{ name: "keep_headers", arguments: {} }]), reply.text("kept")],
        ["run", "--agent", passing, "-w", ws, "--run-id", "passed", "-m", "go"],
        { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_HEADERS: `x-api-key=${HEADER_SECRET}` },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(readFileSync(join(ws, "seen-headers.txt"), "utf8")).toBe(`x-api-key=${HEADER_SECRET}`);
      const observation = readEvents(ws, "passed").find((event) => event.type === "ACTION_RESULT");
      expect(observation).toMatchObject({ observation_content: expect.stringContaining("kept [[REDACTED]]") });
      for (const file of collectFiles(runDir(ws, "passed"))) expect(readFileSync(file, "utf8"), file).not.toContain(HEADER_SECRET);
    } finally {
      await collector.close();
    }
  }, 60_000);
});

describe("a sub-agent", () => {
  it("a delta run started by a tool joins its parent's trace, under the tool's span, live", async () => {
    const collector = await startOtlpCollector();
    const server = await startMockLlm([reply.toolCalls([{ name: "delegate", arguments: {} }]), reply.text("child done"), reply.text("parent done")]);
    const childAgent = writeAgent(root, {}, "child-agent");
    const childWs = join(root, "ws-sub-child");
    const parentAgent = writeAgent(root, {
      agentYaml: `name: parent-agent\nllm:\n  model: mock-model\nenv_passthrough: [DELTA_API_KEY, DELTA_BASE_URL]\ntools:\n  - name: delegate\n    exec: "${process.execPath} ${DELTA_BIN} run --agent ${childAgent} -w ${childWs} --run-id sub -m sub-task"\n`,
    }, "parent-agent");
    const ws = join(root, "ws-sub-parent");
    try {
      const run = await delta(["run", "--agent", parentAgent, "-w", ws, "--run-id", "parent", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint }), timeoutMs: 60_000 });
      expect(run.exitCode, run.stderr).toBe(0);
      const parentTrace = (JSON.parse(run.stdout) as RunResultJson).trace_id;
      const spans = collector.spans();
      const tool = byName(spans, "execute_tool").find((span) => span.attributes["gen_ai.tool.name"] === "delegate")!;
      const child = byName(spans, "invoke_agent").find((span) => span.attributes["gen_ai.conversation.id"] === "sub")!;
      expect(child.traceId).toBe(parentTrace);
      expect(tool.traceId).toBe(parentTrace);
      expect(child.parentSpanId).toBe(tool.spanId);
      expect(readEvents(childWs, "sub")[0]).toMatchObject({ trace_id: parentTrace, parent_span_id: tool.spanId });
    } finally {
      await server.close();
      await collector.close();
    }
  }, 60_000);
});

describe("a dead collector costs at most the flush bound and one warning line", () => {
  const steps = (): Step[] => [reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text("done")];
  let baseline: RunResultJson;
  beforeAll(async () => {
    baseline = (await runAgainst(steps(), ["run", "--agent", agent, "-w", join(root, "ws-dead-baseline"), "--run-id", "base", "-m", "go"], {})).result;
  }, 60_000);

  const comparable = (result: RunResultJson): unknown => ({ status: result.status, result: result.result, iterations: result.metrics.iterations, usage: result.metrics.usage });

  for (const behaviour of ["refused", "silent", "unavailable"] as const) {
    it(`a collector that is ${behaviour === "refused" ? "a refused port" : behaviour === "silent" ? "a listener that never answers" : "answering 503"}: same exit code and RunResult, one warning`, async () => {
      const collector = await startOtlpCollector(behaviour === "refused" ? "accept" : behaviour);
      const endpoint = collector.endpoint;
      if (behaviour === "refused") await collector.close();
      try {
        const run = await runAgainst(steps(), ["run", "--agent", agent, "-w", join(root, `ws-dead-${behaviour}`), "--run-id", "dead", "-m", "go"], { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "1500" });
        expect(run.exitCode, run.stderr).toBe(0);
        expect(comparable(run.result)).toEqual(comparable(baseline));
        const warnings = run.stderr.split("\n").filter((line) => line.includes("could not export"));
        // A collector that never answers would hold the run for ever without the 1.5 s bound: it ended, with one warning.
        expect(warnings, run.stderr).toHaveLength(1);
      } finally {
        if (behaviour !== "refused") await collector.close();
      }
    }, 60_000);
  }

  it("grpc is refused with one warning and nothing is sent", async () => {
    const collector = await startOtlpCollector();
    try {
      const run = await runAgainst(steps(), ["run", "--agent", agent, "-w", join(root, "ws-grpc"), "--run-id", "grpc", "-m", "go"], { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr.split("\n").filter((line) => line.includes("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"))).toHaveLength(1);
      expect(collector.requests()).toBe(0);
    } finally {
      await collector.close();
    }
  }, 60_000);
});

describe("a run killed mid-tool", () => {
  it("exports its open spans ending at the last journaled time, ERROR, marked incomplete", async () => {
    const server = await startMockLlm([reply.toolCalls([{ name: "slow", arguments: {} }])]);
    const ws = join(root, "ws-killed");
    try {
      const child = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "killed", "-m", "go"], { env: modelEnv(server.baseUrl) });
      await waitFor(() => journalHas(ws, "killed", "ACTION_REQUEST"), 30_000, "the slow tool to start");
      child.kill("SIGKILL");
      await child;
    } finally {
      await server.close();
    }
    const events = readEvents(ws, "killed");
    const exported = await delta(["export", "killed", "-w", ws, "--format", "otlp-json"]);
    expect(exported.exitCode, exported.stderr).toBe(0);
    const collector = await startOtlpCollector();
    try {
      await fetch(`${collector.endpoint}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: exported.stdout });
      const spans = collector.spans();
      const lastNano = String(BigInt(Date.parse(events[events.length - 1]!.timestamp)) * 1_000_000n);
      for (const name of ["invoke_agent", "execute_tool"]) {
        const [span] = byName(spans, name);
        expect(span, name).toBeDefined();
        expect(span!.status.code).toBe(2);
        expect(span!.attributes["delta.run.incomplete"]).toBe(true);
        expect(span!.endTimeUnixNano).toBe(lastNano);
      }
    } finally {
      await collector.close();
    }

    // The continue that takes the dead run over sends, live, the spans its janitor ends too: the same as an export of the whole journal.
    const live = await startOtlpCollector();
    const again = await startOtlpCollector();
    const model = await startMockLlm([reply.text("recovered")]);
    try {
      const resumed = await delta(["continue", "--run-id", "killed", "-w", ws, "--format", "json"], { env: modelEnv(model.baseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: live.endpoint }), timeoutMs: 60_000 });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const spans = live.spans();
      const takeover = byName(spans, "invoke_agent").find((span) => span.attributes["delta.invocation"] === 2)!;
      expect(takeover.events.map((event) => event.name)).toContain("delta.run.takeover");
      expect(byName(spans, "invoke_agent").find((span) => span.attributes["delta.invocation"] === 1)!.attributes["delta.run.incomplete"]).toBe(true);
      const exported = await delta(["export", "killed", "-w", ws, "--otlp", "--endpoint", again.endpoint]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(sortedSpans(spans)).toEqual(sortedSpans(again.spans()));
    } finally {
      await model.close();
      await live.close();
      await again.close();
    }
  }, 90_000);
});

describe("hooks' outcomes", () => {
  it("each hook's outcome is an event on its invocation's span, the same live and exported, without the hook's output; on_run_end's stays in io/hooks/", async () => {
    const hooked = writeAgent(root, {
      tools: TOOLS,
      hooksYaml: JSON.stringify({
        on_iteration_start: { command: ["sh", "-c", "exit 3"] },
        pre_tool_execution: { command: ["sh", "-c", "cat >/dev/null; echo hook-stderr-words >&2; exit 2"] },
        post_tool_execution: { command: ["sh", "-c", "echo '{\"note\":\"hook-stdout-words\"}'"] },
        on_run_end: { command: ["true"] },
      }),
    }, "hooked-agent");
    const live = await startOtlpCollector();
    const again = await startOtlpCollector();
    const ws = join(root, "ws-hooks");
    try {
      const run = await runAgainst([reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]), reply.text("done")], ["run", "--agent", hooked, "-w", ws, "--run-id", "hooked", "-m", "go"], {
        OTEL_EXPORTER_OTLP_ENDPOINT: live.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        // A batch of one span: every span its own request, so the bound is seen to reach the batch processor.
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
      });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(live.exports.map((received) => received.contentType)).toEqual(live.exports.map(() => "application/json"));
      expect(live.exports.map((received) => received.spans.length)).toEqual(live.spans().map(() => 1));
      expect(live.requests()).toBe(live.spans().length);
      const [invocation] = byName(live.spans(), "invoke_agent");
      const hookEvents = invocation!.events.filter((event) => event.name === "delta.hook").map((event) => event.attributes);
      expect(hookEvents.map((attributes) => [attributes["delta.hook.name"], attributes["delta.hook.outcome"], attributes["delta.hook.exit_code"], attributes["delta.iteration"]])).toEqual([
        ["on_iteration_start", "failed_open", 3, 1],
        ["pre_tool_execution", "block", 2, 1],
        ["post_tool_execution", "continue", 0, 1],
        ["on_iteration_start", "failed_open", 3, 2],
      ]);
      for (const attributes of hookEvents) expect(attributes["delta.hook.record"]).toMatch(/^io\/hooks\/[a-z_]+_\d{8}T\d{9}Z(_\d+)?\.json$/);
      // Not even the blocked tool's ERROR status quotes the hook's reason: that is content.
      const text = JSON.stringify(live.exports);
      expect(text).not.toContain("hook-stdout-words");
      expect(text).not.toContain("hook-stderr-words");

      // The journal holds them; on_run_end ran after ENGINE_END, which stays last: its outcome is in io/hooks/ only.
      const events = readEvents(ws, "hooked");
      expect(events.filter((event) => event.type === "HOOK_RESULT").map((event) => event.type === "HOOK_RESULT" && event.hook)).toEqual(["on_iteration_start", "pre_tool_execution", "post_tool_execution", "on_iteration_start"]);
      expect(events[events.length - 1]!.type).toBe("ENGINE_END");
      expect(readdirSync(join(runDir(ws, "hooked"), "io", "hooks")).filter((name) => name.startsWith("on_run_end_"))).toHaveLength(1);

      const exported = await delta(["export", "hooked", "-w", ws, "--otlp", "--endpoint", again.endpoint]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(sortedSpans(again.spans())).toEqual(sortedSpans(live.spans()));
      expect(again.exports.map((received) => received.resource)).toEqual(live.exports.slice(0, 1).map((received) => received.resource));
      expect(live.exports[0]!.resource).toMatchObject({ "host.name": hostname() });

      const shown = await delta(["show", "hooked", "-w", ws]);
      expect(shown.stdout).toContain("pre_tool_execution hook blocked · exit 2");
    } finally {
      await live.close();
      await again.close();
    }
  }, 90_000);
});

describe("the resource", () => {
  it("host.name is the host each invocation ran on, as its ENGINE_START journaled it, not the machine that exports: one resource per host", async () => {
    const ws = join(root, "ws-host");
    const run = await runAgainst([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Colour?" } }])], ["run", "--agent", agent, "-w", ws, "--run-id", "far", "-m", "go"], {});
    expect(run.exitCode, run.stderr).toBe(101);
    const journal = join(runDir(ws, "far"), "journal.jsonl");
    const [first, ...rest] = readFileSync(journal, "utf8").split("\n");
    expect(JSON.parse(first!)).toMatchObject({ type: "ENGINE_START", config: { hostname: hostname() } });
    // The run as if another machine had started it (a workspace on a shared disk), continued here and exported from here.
    writeFileSync(journal, [first!.replace(`"hostname":${JSON.stringify(hostname())}`, `"hostname":"far-away-host"`), ...rest].join("\n"));
    const resumed = await runAgainst([reply.text("blue it is")], ["continue", "--run-id", "far", "-w", ws, "-m", "blue"], {});
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const exported = await delta(["export", "far", "-w", ws, "--format", "otlp-json"], { env: { OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci" } });
    expect(exported.exitCode, exported.stderr).toBe(0);
    interface Keyed { key: string; value: { stringValue?: string; intValue?: string | number } }
    const request = JSON.parse(exported.stdout) as { resourceSpans: { resource: { attributes: Keyed[] }; scopeSpans: { spans: { name: string; attributes: Keyed[] }[] }[] }[] };
    const byHost = Object.fromEntries(request.resourceSpans.map((group) => {
      const resource = Object.fromEntries(group.resource.attributes.map((attribute) => [attribute.key, attribute.value.stringValue]));
      expect(resource).toMatchObject({ "service.name": "delta", "deployment.environment": "ci" });
      const invocations = group.scopeSpans.flatMap((scope) => scope.spans).filter((span) => span.name.startsWith("invoke_agent"))
        .map((span) => Number(span.attributes.find((attribute) => attribute.key === "delta.invocation")!.value.intValue));
      return [resource["host.name"], invocations];
    }));
    expect(byHost).toEqual({ "far-away-host": [1], [hostname()]: [2] });
  }, 60_000);
});

describe("an agent's export", () => {
  it("`delta export --agent` holds every run of every workspace of the agent, each its own trace, and no other agent's", async () => {
    const fleet = writeAgent(root, {}, "fleet-agent");
    const other = writeAgent(root, {}, "other-agent");
    const first = await runAgainst([reply.text("a")], ["run", "--agent", fleet, "-y", "--run-id", "one", "-m", "go"], {});
    const second = await runAgainst([reply.text("b")], ["run", "--agent", fleet, "-y", "--run-id", "two", "-m", "go"], {});
    const elsewhere = await runAgainst([reply.text("c")], ["run", "--agent", other, "-y", "--run-id", "three", "-m", "go"], {});
    const collector = await startOtlpCollector();
    try {
      const exported = await delta(["export", "--agent", fleet, "--otlp", "--endpoint", collector.endpoint]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      const invocations = byName(collector.spans(), "invoke_agent");
      expect(invocations.map((span) => [span.attributes["gen_ai.conversation.id"], span.traceId]).sort()).toEqual([["one", first.result.trace_id], ["two", second.result.trace_id]]);
      expect(first.result.trace_id).not.toBe(second.result.trace_id);
      expect(collector.spans().map((span) => span.traceId)).not.toContain(elsewhere.result.trace_id);
    } finally {
      await collector.close();
    }
  }, 60_000);
});

describe("OTEL_TRACES_SAMPLER", () => {
  // Trace ids a caller gives: the low 56 bits of the first are over half of 2^56, of the second under.
  const KEPT = "0af7651916cd43dd0080000000000001";
  const DROPPED = "0af7651916cd43dd007fffffffffffff";

  it("traceidratio decides from the run's trace id: a dropped run sends nothing live, tells its tools so, and `delta export` still sends it", async () => {
    const collector = await startOtlpCollector();
    const sampler = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.5" };
    try {
      const dropped = await runAgainst([reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("d")], ["run", "--agent", agent, "-w", join(root, "ws-sampled"), "--run-id", "dropped", "-m", "go"], { ...sampler, TRACEPARENT: `00-${DROPPED}-b7ad6b7169203331-01` });
      expect(dropped.exitCode, dropped.stderr).toBe(0);
      expect(collector.requests()).toBe(0);
      expect(actionResultText(join(root, "ws-sampled"), "dropped")).toMatch(new RegExp(`traceparent=\\[00-${DROPPED}-[0-9a-f]{16}-00\\]`));
      const kept = await runAgainst([reply.text("k")], ["run", "--agent", agent, "-w", join(root, "ws-sampled"), "--run-id", "kept", "-m", "go"], { ...sampler, TRACEPARENT: `00-${KEPT}-b7ad6b7169203331-01` });
      expect(kept.exitCode, kept.stderr).toBe(0);
      expect(new Set(collector.spans().map((span) => span.traceId))).toEqual(new Set([KEPT]));
      const exported = await delta(["export", "dropped", "-w", join(root, "ws-sampled"), "--otlp", "--endpoint", collector.endpoint], { env: sampler });
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(collector.spans().some((span) => span.traceId === DROPPED)).toBe(true);
    } finally {
      await collector.close();
    }
  }, 90_000);

  it("a continue follows the sampling of the run's first invocation, not the flag of its own TRACEPARENT; an unknown sampler is one warning", async () => {
    const collector = await startOtlpCollector();
    const ws = join(root, "ws-sampled-continue");
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint };
    try {
      const first = await runAgainst([reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Colour?" } }])], ["run", "--agent", agent, "-w", ws, "--run-id", "asked", "-m", "go"], { ...otel, TRACEPARENT: `00-${DROPPED}-b7ad6b7169203331-01` });
      expect(first.exitCode, first.stderr).toBe(101);
      const before = collector.spans().length;
      expect(before).toBeGreaterThan(0);
      const second = await runAgainst([reply.text("blue")], ["continue", "--run-id", "asked", "-w", ws, "-m", "blue"], { ...otel, OTEL_TRACES_SAMPLER: "something_else", TRACEPARENT: `00-${KEPT}-00f067aa0ba902b7-00` });
      expect(second.exitCode, second.stderr).toBe(0);
      expect(second.stderr.split("\n").filter((line) => line.includes("OTEL_TRACES_SAMPLER=something_else"))).toHaveLength(1);
      const resumed = byName(collector.spans(), "invoke_agent").find((span) => span.attributes["delta.invocation"] === 2);
      expect(resumed, "the continue's spans were sent").toBeDefined();
      expect(resumed!.traceId).toBe(DROPPED);
      expect(resumed!.links).toEqual([{ traceId: KEPT, spanId: "00f067aa0ba902b7" }]);
    } finally {
      await collector.close();
    }
  }, 90_000);
});

function actionResultText(workDir: string, runId: string): string {
  return readEvents(workDir, runId).flatMap((event) => (event.type === "ACTION_RESULT" ? [event.observation_content] : [])).join("\n");
}

describe("MCP tools", () => {
  it("an MCP tool call is an execute_tool span of type extension naming its server and tool, live and exported alike", async () => {
    const mcp = writeAgent(root, { agentYaml: `name: mcp-agent\nllm:\n  model: mock-model\nmcp_servers:\n${stdioServerYaml("fs", filesystemServer("${CWD}"))}` }, "mcp-agent");
    const ws = join(root, "ws-mcp");
    mkdirSync(ws);
    writeFileSync(join(ws, "notes.txt"), "apples\n");
    const live = await startOtlpCollector();
    const again = await startOtlpCollector();
    try {
      const run = await runAgainst([reply.toolCalls([{ name: "fs__read_text_file", arguments: { path: "notes.txt" } }]), reply.text("done")], ["run", "--agent", mcp, "-w", ws, "--run-id", "mcp", "-m", "go"], { OTEL_EXPORTER_OTLP_ENDPOINT: live.endpoint });
      expect(run.exitCode, run.stderr).toBe(0);
      const [tool] = byName(live.spans(), "execute_tool");
      expect(tool!.attributes).toMatchObject({ "gen_ai.tool.name": "fs__read_text_file", "gen_ai.tool.type": "extension", "delta.mcp.server": "fs", "delta.mcp.tool": "read_text_file", "delta.tool.status": "SUCCESS" });
      expect(tool!.parentSpanId).toBe(byName(live.spans(), "invoke_agent")[0]!.spanId);
      const exported = await delta(["export", "mcp", "-w", ws, "--otlp", "--endpoint", again.endpoint]);
      expect(exported.exitCode, exported.stderr).toBe(0);
      expect(sortedSpans(again.spans())).toEqual(sortedSpans(live.spans()));
    } finally {
      await live.close();
      await again.close();
    }
  }, 60_000);
});

describe("the OpenTelemetry SDK", () => {
  /** Runs `delta` with the bundle probe; returns the names of the bundles of dist/ it read. */
  async function bundlesRead(name: string, env: Record<string, string>): Promise<string[]> {
    const probe = bundleProbe(root, name);
    const run = await runAgainst([reply.text("hi")], ["run", "--agent", agent, "-w", join(root, `ws-bundles-${name}`), "--run-id", name, "-m", "go"], { ...env, ...probe.env });
    expect(run.exitCode, run.stderr).toBe(0);
    return probe.bundlesRead();
  }

  it("is loaded only when spans are exported: not with export off, nor for a run its sampler drops", async () => {
    const collector = await startOtlpCollector();
    try {
      const off = await bundlesRead("off", {});
      expect(off).toContain("delta.cjs");
      expect(off).not.toContain("delta-otel-sdk.cjs");
      expect(await bundlesRead("dropped", { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_TRACES_SAMPLER: "always_off" })).not.toContain("delta-otel-sdk.cjs");
      expect(await bundlesRead("on", { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint })).toContain("delta-otel-sdk.cjs");
      expect(collector.spans().length).toBeGreaterThan(0);
    } finally {
      await collector.close();
    }
  }, 60_000);
});
