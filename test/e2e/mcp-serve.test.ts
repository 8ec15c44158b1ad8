// End to end: `delta mcp serve` driven by the official MCP SDK client over stdio and Streamable HTTP, the model played by the mock server.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DELTA_BIN, NO_MODEL_KEYS, REPO, actionResults, delta, journalHas, modelEnv, readEvents, readMetadataFile, waitFor, writeAgent, setUpE2e } from "./harness.js";
import { pauseGate } from "../support/pause-points.js";
import { fault, messagesOf, reply, taskOf, toolResultsOf, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";

let llm: MockLlm;
const { root, serve } = setUpE2e("delta-mcp-serve-");
/** $XDG_STATE_HOME of every server here: the token a server makes goes there, not into this user's own state folder. */
let stateHome: string;
let agent: string;
/** Tasks starting "hang" get no answer from the model while this holds. */
let hanging = true;

function script(request: RecordedRequest): Step {
  const task = taskOf(request);
  const results = toolResultsOf(request);
  const lastUser = messagesOf(request).filter((message) => message.role === "user").at(-1)?.content ?? "";
  if (task.startsWith("hang") && hanging) return fault.hang();
  if (task.startsWith("slow")) return fault.delay(1500, reply.text(`done: ${task}`));
  if (task.startsWith("secret")) return results.length === 0 ? reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Your token?", input_type: "password" } }]) : reply.text("got it");
  if (task.startsWith("ask")) return results.length === 0 ? reply.toolCalls([{ name: "ask_human", arguments: { prompt: "Which color?" } }]) : reply.text(`you chose ${results.at(-1)}`);
  if (task.startsWith("env") && results.length === 0) return reply.toolCalls([{ name: "show_env", arguments: {} }]);
  if (task.startsWith("stubborn") && results.length === 0) return reply.toolCalls([{ name: "stubborn", arguments: {} }]);
  if (task.startsWith("tool") && results.length === 0) return reply.toolCalls([{ name: "echo", arguments: { text: "echoed" } }]);
  return reply.text(`done: ${lastUser}`);
}

beforeAll(async () => {
  llm = await serve(script);
  stateHome = mkdtempSync(join(root, "state-"));
  agent = writeAgent(root, { tools: 'tools:\n  - name: echo\n    exec: "echo ${text}"\n  - name: show_env\n    exec: "env"\n  - name: stubborn\n    shell: "trap \\"\\" TERM; touch stubborn.started; sleep 60"\n' });
});

const env = (): Record<string, string> => ({ ...process.env, ...NO_MODEL_KEYS, ...modelEnv(llm.baseUrl) }) as Record<string, string>;

/** Starts `delta mcp serve --http 0` and returns its URL from stderr, and the bearer token its requests need. */
async function startHttpServer(workDir: string, extraEnv: Record<string, string> = {}, extraArgs: string[] = []): Promise<{ url: string; token: string; proc: ChildProcess; stderr: () => string }> {
  const proc = spawn(process.execPath, [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir, "--http", "0", ...extraArgs], { env: { ...env(), XDG_STATE_HOME: stateHome, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  await waitFor(() => /listening on/.test(stderr) || proc.exitCode !== null, 20_000, "the server to listen");
  const url = /listening on (\S+)/.exec(stderr)?.[1];
  if (url === undefined) throw new Error(`the server did not start: ${stderr}`);
  const token = extraEnv.DELTA_MCP_TOKEN ?? readFileSync(join(stateHome, "delta", "mcp-token"), "utf8").trim();
  return { url, token, proc, stderr: () => stderr };
}

/** The header every request to an HTTP server needs. */
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

interface Served {
  client: Client;
  transport: Transport;
  workDir: string;
  /** Every message the client received, in the order it came. */
  received: unknown[];
  stop(): Promise<void>;
}

/**
 * The progress values of the notifications received by `served` since `from`, as they came on the wire. The SDK's
 * client hands a notification to its handler a tick later than it takes a response: a progress notification that
 * arrives together with its call's response is dropped before `onprogress` sees it.
 */
function progressSince(served: Served, from: number): number[] {
  return served.received.slice(from).flatMap((message) => {
    const { method, params } = message as { method?: string; params?: { progress?: number } };
    return method === "notifications/progress" ? [params!.progress!] : [];
  });
}

/** Records every message the transport hands the client. */
function recordReceived(transport: Transport): unknown[] {
  const received: unknown[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    received.push(message);
    deliver?.(message, extra);
  };
  return received;
}

const started: Served[] = [];
afterEach(async () => {
  for (const served of started.splice(0)) await served.stop();
});

/** A client that declares form elicitation and answers each elicitation/create with this. */
type Elicit = (request: ElicitRequest["params"]) => ElicitResult;

/** A client connected to a new server; a "test" one is stopped after the test, a "kept" one by whoever made it. */
async function connect(kind: "stdio" | "http", elicit?: Elicit, workDir = mkdtempSync(join(root, "ws-")), lifetime: "test" | "kept" = "test"): Promise<Served> {
  const client = new Client({ name: "test-client", version: "1.0.0" }, elicit ? { capabilities: { elicitation: { form: {} } } } : undefined);
  if (elicit) client.setRequestHandler(ElicitRequestSchema, (request) => elicit(request.params));
  let served: Served;
  if (kind === "stdio") {
    const transport = new StdioClientTransport({ command: process.execPath, args: [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir], env: env(), stderr: "pipe" });
    await client.connect(transport);
    served = { client, transport, workDir, received: recordReceived(transport), stop: async () => void (await client.close()) };
  } else {
    const server = await startHttpServer(workDir);
    const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: bearer(server.token) } });
    await client.connect(transport);
    served = {
      client,
      transport,
      workDir,
      received: recordReceived(transport),
      stop: async () => {
        await client.close();
        server.proc.kill("SIGTERM");
        await new Promise((resolve) => (server.proc.exitCode !== null ? resolve(null) : server.proc.once("exit", resolve)));
      },
    };
  }
  if (lifetime === "test") started.push(served);
  return served;
}

type ToolAnswer = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

async function call(served: Served, name: string, args: Record<string, unknown>, onprogress?: (progress: { progress: number }) => void): Promise<ToolAnswer> {
  return (await served.client.callTool({ name, arguments: args }, undefined, { onprogress, timeout: 60_000 })) as ToolAnswer;
}

function textOf(answer: ToolAnswer): string {
  return answer.content.map((part) => part.text ?? "").join("");
}

async function resultWhenEnded(served: Served, runId: string): Promise<Record<string, unknown>> {
  for (;;) {
    const answer = await call(served, "result", { run_id: runId });
    if (answer.structuredContent?.status !== "RUNNING") return answer.structuredContent!;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(["stdio", "http"] as const)("delta mcp serve over %s", (kind) => {
  // One server per kind of client serves every test of this block: each test's runs have their own run ids.
  let plain: Served;
  let eliciting: Served;
  /** What the eliciting client answers; each test that elicits sets it. */
  let elicit: Elicit = () => ({ action: "cancel" });
  beforeAll(async () => {
    [plain, eliciting] = await Promise.all([connect(kind, undefined, undefined, "kept"), connect(kind, (params) => elicit(params), undefined, "kept")]);
  });
  afterAll(async () => {
    await Promise.all([plain?.stop(), eliciting?.stop()]);
  });

  it("lists the five tools", async () => {
    const served = plain;
    const { tools } = await served.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["answer", "continue", "result", "run", "status"]);
  }, 60_000);

  it("returns the RunResult of a run that ends within wait_ms, an ordinary run the CLI lists, with progress per iteration", async () => {
    const served = plain;
    const from = served.received.length;
    const answer = await call(served, "run", { task: "tool task", run_id: `within-${kind}` }, () => {});
    expect(answer.isError).toBeFalsy();
    expect(answer.structuredContent).toMatchObject({ schema_version: "2.0", run_id: `within-${kind}`, status: "COMPLETED", result: "done: tool task" });
    expect(JSON.parse(textOf(answer))).toMatchObject({ status: "COMPLETED" });
    expect(progressSince(served, from)).toEqual([1, 2]);
    const listed = await delta(["list-runs", "-w", served.workDir, "--format", "json"]);
    expect(JSON.parse(listed.stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ run_id: `within-${kind}`, status: "COMPLETED" })]));
  }, 60_000);

  it("sends no progress when the client sent no progress token", async () => {
    const served = plain;
    const from = served.received.length;
    const answer = await call(served, "run", { task: "tool quiet", run_id: `quiet-${kind}` });
    expect(answer.structuredContent).toMatchObject({ status: "COMPLETED" });
    // Nothing came but the call's response: no notification of any kind.
    expect(served.received.slice(from).filter((message) => "method" in (message as object))).toEqual([]);
  }, 60_000);

  it("answers RUNNING past wait_ms, then status and result follow the run to its end", async () => {
    const served = plain;
    const answer = await call(served, "run", { task: "slow task", run_id: `beyond-${kind}`, wait_ms: 100 });
    expect(answer.structuredContent).toEqual({ run_id: `beyond-${kind}`, status: "RUNNING", iterations: 0 });
    expect((await call(served, "status", { run_id: `beyond-${kind}` })).structuredContent).toMatchObject({ run_id: `beyond-${kind}`, status: "RUNNING" });
    expect(await resultWhenEnded(served, `beyond-${kind}`)).toMatchObject({ schema_version: "2.0", status: "COMPLETED", result: "done: slow task" });
    expect((await call(served, "status", { run_id: `beyond-${kind}` })).structuredContent).toMatchObject({ status: "COMPLETED", iterations: 1 });
  }, 60_000);

  it("continues a finished run with a new instruction", async () => {
    const served = plain;
    await call(served, "run", { task: "first task", run_id: `cont-${kind}` });
    const answer = await call(served, "continue", { run_id: `cont-${kind}`, message: "now the second" });
    expect(answer.structuredContent).toMatchObject({ run_id: `cont-${kind}`, status: "COMPLETED", result: "done: now the second" });
  }, 60_000);

  it("answers the ask_human of a waiting run (a client that cannot elicit)", async () => {
    const served = plain;
    const waiting = await call(served, "run", { task: "ask me", run_id: `ask-${kind}` });
    expect(waiting.structuredContent).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { prompt: "Which color?" } });
    const answered = await call(served, "answer", { run_id: `ask-${kind}`, answer: "green" });
    expect(answered.structuredContent).toMatchObject({ status: "COMPLETED", result: "you chose green" });
    // Nothing is waiting any more: a second answer is refused, naming the field.
    const again = await call(served, "answer", { run_id: `ask-${kind}`, answer: "blue" });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toMatch(/^run_id: run ask-\w+ is COMPLETED, not WAITING_FOR_INPUT/);
  }, 60_000);

  it("asks a client that can elicit the run's question, and continues the run with the answer", async () => {
    const asked: ElicitRequest["params"][] = [];
    elicit = (params) => (asked.push(params), { action: "accept", content: { answer: "green" } });
    const served = eliciting;
    const from = served.received.length;
    const answer = await call(served, "run", { task: "ask elicited", run_id: `elicit-${kind}` }, () => {});
    expect(answer.structuredContent).toMatchObject({ run_id: `elicit-${kind}`, status: "COMPLETED", result: "you chose green" });
    expect(asked).toEqual([expect.objectContaining({ mode: "form", message: "Which color?", requestedSchema: expect.objectContaining({ required: ["answer"] }) })]);
    // The answer reached the run as any answer does: journaled, and the CLI shows the run completed.
    expect(readEvents(served.workDir, `elicit-${kind}`).some((event) => event.type === "HUMAN_INPUT_RECEIVED")).toBe(true);
    expect(readMetadataFile(served.workDir, `elicit-${kind}`).status).toBe("COMPLETED");
    // Progress rises across the two processes of the run (the question, then the answer).
    expect(progressSince(served, from)).toEqual([1, 2]);
  }, 60_000);

  it.each(["decline", "cancel"] as const)("leaves the run WAITING_FOR_INPUT when the user chooses %s, says so, and answer still works", async (action) => {
    elicit = () => ({ action });
    const served = eliciting;
    const runId = `elicit-${action}-${kind}`;
    const waiting = await call(served, "run", { task: "ask and refuse", run_id: runId });
    expect(waiting.structuredContent).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { prompt: "Which color?" }, elicitation: { action } });
    expect(textOf(waiting)).toContain("answer it with the answer tool");
    expect(readMetadataFile(served.workDir, runId).status).toBe("WAITING_FOR_INPUT");
    expect((await call(served, "status", { run_id: runId })).structuredContent).toMatchObject({ status: "WAITING_FOR_INPUT" });
    const answered = await call(served, "answer", { run_id: runId, answer: "red" });
    expect(answered.structuredContent).toMatchObject({ status: "COMPLETED", result: "you chose red" });
  }, 60_000);

  it("does not elicit a sensitive question", async () => {
    const asked: unknown[] = [];
    elicit = (params) => (asked.push(params), { action: "accept", content: { answer: "leaked" } });
    const served = eliciting;
    const waiting = await call(served, "run", { task: "secret please", run_id: `secret-${kind}` });
    expect(waiting.structuredContent).toMatchObject({ status: "WAITING_FOR_INPUT", interaction: { sensitive: true }, elicitation: { action: "not_asked" } });
    expect(asked).toEqual([]);
  }, 60_000);

  it("runs two runs at once", async () => {
    const served = plain;
    const [a, b] = await Promise.all([
      call(served, "run", { task: "slow one", run_id: `two-a-${kind}` }),
      call(served, "run", { task: "slow two", run_id: `two-b-${kind}` }),
    ]);
    expect(a.structuredContent).toMatchObject({ status: "COMPLETED", result: "done: slow one" });
    expect(b.structuredContent).toMatchObject({ status: "COMPLETED", result: "done: slow two" });
    // Both were at the model together: each started before the other ended.
    const times = [`two-a-${kind}`, `two-b-${kind}`].map((id) => readMetadataFile(served.workDir, id));
    expect(String(times[0]!.created_at) < String(times[1]!.end_time) && String(times[1]!.created_at) < String(times[0]!.end_time)).toBe(true);
  }, 60_000);

  it("refuses a bad run id with an error naming the field", async () => {
    const served = plain;
    const unsafe = await call(served, "run", { task: "x", run_id: "../escape" });
    expect(unsafe.isError).toBe(true);
    expect(textOf(unsafe)).toMatch(/^run_id: Invalid run id "\.\.\/escape"/);
    const missing = await call(served, "status", { run_id: "no-such-run" });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^run_id: no run no-such-run in the workspace/);
    const wrongType = await call(served, "result", { run_id: 7 });
    expect(wrongType.isError).toBe(true);
    expect(textOf(wrongType)).toMatch(/argument run_id/);
    expect(existsSync(join(served.workDir, ".delta", "..", "escape"))).toBe(false);
  }, 60_000);
});

describe("a server started again on the same workspace", () => {
  it("gives the full RunResult of runs an earlier server started, rebuilt from their journals", async () => {
    const first = await connect("stdio");
    const completed = (await call(first, "run", { task: "tool before restart", run_id: "before-done" })).structuredContent!;
    const waiting = (await call(first, "run", { task: "ask before restart", run_id: "before-ask" })).structuredContent!;
    expect(completed).toMatchObject({ status: "COMPLETED" });
    expect(waiting).toMatchObject({ status: "WAITING_FOR_INPUT" });
    // A third run is still at the model when the first server goes: it ends INTERRUPTED.
    hanging = true;
    await call(first, "run", { task: "hang before restart", run_id: "before-hang", wait_ms: 0 });
    await waitFor(() => llm.requests.some((request) => taskOf(request) === "hang before restart"), 20_000, "the run to reach the model");
    await first.stop();
    const second = await connect("stdio", undefined, first.workDir);
    for (const [runId, earlier] of [["before-done", completed], ["before-ask", waiting]] as const) {
      const again = (await call(second, "result", { run_id: runId })).structuredContent!;
      const { metrics: earlierMetrics, ...earlierRest } = earlier as { metrics: Record<string, unknown> };
      const { metrics: againMetrics, ...againRest } = again as { metrics: Record<string, unknown> };
      expect(againRest).toEqual(earlierRest);
      expect(againMetrics).toMatchObject({ iterations: earlierMetrics.iterations, usage: earlierMetrics.usage });
    }
    expect((await call(second, "result", { run_id: "before-hang" })).structuredContent).toMatchObject({
      schema_version: "2.0",
      run_id: "before-hang",
      status: "INTERRUPTED",
      error: { type: "INTERRUPTED", message: "The run was interrupted by a signal." },
      metrics: { iterations: 0 },
      metadata: { workspace_path: first.workDir },
    });
  }, 60_000);
});

describe("a client that disconnects mid-run", () => {
  it.each(["stdio", "http"] as const)("over %s leaves the run INTERRUPTED (130), and `delta continue` completes it", async (kind) => {
    hanging = true;
    const served = await connect(kind);
    const runId = `gone-${kind}`;
    const answer = await call(served, "run", { task: `hang ${kind}`, run_id: runId, wait_ms: 0 });
    expect(answer.structuredContent).toMatchObject({ status: "RUNNING" });
    await waitFor(() => llm.requests.some((request) => taskOf(request) === `hang ${kind}`), 20_000, "the run to reach the model");
    if (kind === "http") await (served.transport as StreamableHTTPClientTransport).terminateSession();
    await served.client.close();
    await waitFor(() => {
      try {
        return readMetadataFile(served.workDir, runId).status === "INTERRUPTED";
      } catch {
        return false;
      }
    }, 20_000, "the run to be INTERRUPTED");
    hanging = false;
    const resumed = await delta(["continue", "-w", served.workDir, "--run-id", runId, "--format", "json"], { env: modelEnv(llm.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: runId, status: "COMPLETED", result: `done: hang ${kind}` });
  }, 60_000);
});

/** An MCP client in a process of its own: it starts a run (wait_ms 0), prints its session id, and stays connected until killed. */
const CLIENT_PROCESS = `
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
const [url, task, runId, token] = process.argv.slice(1);
const client = new Client({ name: "client-process", version: "1" });
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: "Bearer " + token } } });
await client.connect(transport);
await client.callTool({ name: "run", arguments: { task, run_id: runId, wait_ms: 0 } });
process.stdout.write("session " + transport.sessionId + "\\n");
setInterval(() => {}, 60_000);
`;

function clientProcess(url: string, token: string, task: string, runId: string): { proc: ChildProcess; session: Promise<string> } {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", CLIENT_PROCESS, url, task, runId, token], { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const session = waitFor(() => /session \S+\n/.test(out), 30_000, `the client of ${runId} to start its run`).then(() => /session (\S+)\n/.exec(out)![1]!);
  return { proc, session };
}

const statusIs = (workDir: string, runId: string, status: string) => (): boolean => {
  try {
    return readMetadataFile(workDir, runId).status === status;
  } catch {
    return false;
  }
};

describe("an HTTP client that goes away without ending its session", () => {
  it("is taken as gone once nothing of it is open for --idle-timeout: its run INTERRUPTED and continued from the CLI; a client that stays keeps its run", async () => {
    hanging = true;
    const workDir = mkdtempSync(join(root, "ws-"));
    const server = await startHttpServer(workDir, {}, ["--idle-timeout", "1"]);
    // Started first: were its open GET stream not counted, its idle time would run out before the other's.
    const stays = clientProcess(server.url, server.token, "hang and stay", "idle-stays");
    let drops: ReturnType<typeof clientProcess> | undefined;
    try {
      await stays.session;
      drops = clientProcess(server.url, server.token, "hang and drop", "idle-drops");
      const dropped = await drops.session;
      await waitFor(() => llm.requests.some((request) => taskOf(request) === "hang and drop") && llm.requests.some((request) => taskOf(request) === "hang and stay"), 20_000, "both runs to reach the model");
      // The client dies: the kernel closes its sockets, no DELETE is sent.
      drops.proc.kill("SIGKILL");
      await waitFor(statusIs(workDir, "idle-drops", "INTERRUPTED"), 20_000, "the dropped client's run to be INTERRUPTED");
      // The killed client's cancelled call may interrupt its run before its session's idle time has run out: wait for both.
      await waitFor(() => /had no request or stream open/.test(server.stderr()), 20_000, "the server to take the dropped client as gone");
      const gone = server.stderr().match(/session \S+ had no request or stream open for 1 s/g) ?? [];
      expect(gone).toEqual([`session ${dropped} had no request or stream open for 1 s`]);
      expect(readMetadataFile(workDir, "idle-stays").status).toBe("RUNNING");
      // The session has ended: a late request with its id is told so (404), as the MCP specification asks.
      const late = await fetch(server.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-session-id": dropped, ...bearer(server.token) },
        body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/list" }),
      });
      expect(late.status).toBe(404);
      expect(await late.text()).toContain(`session ${dropped} has ended`);
      hanging = false;
      const resumed = await delta(["continue", "-w", workDir, "--run-id", "idle-drops", "--format", "json"], { env: modelEnv(llm.baseUrl) });
      expect(resumed.exitCode).toBe(0);
      expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: "done: hang and drop" });
    } finally {
      stays.proc.kill("SIGKILL");
      drops?.proc.kill("SIGKILL");
      server.proc.kill("SIGTERM");
      await new Promise((resolve) => (server.proc.exitCode !== null ? resolve(null) : server.proc.once("exit", resolve)));
    }
  }, 90_000);
});

describe("a run that does not end on SIGTERM", () => {
  it("is killed once --term-grace is over, and stays resumable", async () => {
    // The run's process stands still before recording its end, and its tool ignores SIGTERM: only SIGKILL ends it.
    const gate = pauseGate("journal-append:ENGINE_END", root);
    const workDir = mkdtempSync(join(root, "ws-"));
    const client = new Client({ name: "test-client", version: "1.0.0" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir, "--term-grace", "0.5"],
      env: { ...env(), ...gate.env },
      stderr: "pipe",
    });
    let stderr = "";
    (transport.stderr as Readable).setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    await client.connect(transport);
    const server = transport.pid!;
    try {
      const answer = (await client.callTool({ name: "run", arguments: { task: "stubborn task", run_id: "stubborn", wait_ms: 0 } })) as ToolAnswer;
      expect(answer.structuredContent).toMatchObject({ status: "RUNNING" });
      await waitFor(() => existsSync(join(workDir, "stubborn.started")), 20_000, "the stubborn tool to start");
      // The client goes: the server sends SIGTERM, waits 0.5 s, then kills; only then can it exit.
      await client.close();
      await waitFor(() => !processAlive(server), 20_000, "the server to exit");
      expect(stderr).toContain("run stubborn did not end within 0.5 s of SIGTERM: killed (SIGKILL)");
      // Killed before it could record an end: kill -9 recovery applies.
      expect(journalHas(workDir, "stubborn", "ENGINE_END")).toBe(false);
      const start = readEvents(workDir, "stubborn")[0]!;
      expect(start.type === "ENGINE_START" && processAlive(Number(start.config.pid))).toBe(false);
    } finally {
      gate.open();
    }
    const resumed = await delta(["continue", "-w", workDir, "--run-id", "stubborn", "--format", "json"], { env: modelEnv(llm.baseUrl) });
    expect(resumed.exitCode).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ run_id: "stubborn", status: "COMPLETED" });
  }, 60_000);
});

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("the HTTP boundary", () => {
  const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
  const post = (url: string, headers: Record<string, string>): Promise<Response> =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }, body: JSON.stringify(initialize) });

  it("refuses a foreign Origin with 403, and lets this machine's in", async () => {
    const workDir = mkdtempSync(join(root, "ws-"));
    const server = await startHttpServer(workDir);
    try {
      const foreign = await post(server.url, { origin: "http://attacker.example", ...bearer(server.token) });
      expect(foreign.status).toBe(403);
      expect(await foreign.text()).toContain("Origin http://attacker.example is not allowed");
      const local = await post(server.url, { origin: "http://localhost:3000", ...bearer(server.token) });
      expect(local.status).toBe(200);
    } finally {
      server.proc.kill("SIGTERM");
    }
  }, 60_000);

  it("serves beyond loopback only with the token, warning that plain HTTP crosses the network unencrypted", async () => {
    const workDir = mkdtempSync(join(root, "ws-"));
    const server = await startHttpServer(workDir, {}, ["--host", "0.0.0.0"]);
    try {
      expect(server.stderr()).toContain("[warning] --host 0.0.0.0 serves beyond this machine over plain HTTP");
      const url = server.url.replace("0.0.0.0", "127.0.0.1");
      expect((await post(url, {})).status).toBe(401);
      expect((await post(url, bearer(server.token))).status).toBe(200);
    } finally {
      server.proc.kill("SIGTERM");
    }
  }, 60_000);

  it("refuses a bad --idle-timeout or --term-grace (126, naming the flag), and --idle-timeout without --http", async () => {
    const home = writeAgent(mkdtempSync(join(root, "flags-")));
    for (const [args, words] of [
      [["--http", "0", "--idle-timeout", "0"], "--idle-timeout 0: not a number of seconds"],
      [["--http", "0", "--term-grace", "soon"], "--term-grace soon: not a number of seconds"],
      [["--idle-timeout", "5"], "--idle-timeout applies to --http <port>"],
    ] as const) {
      const refused = await delta(["mcp", "serve", "--agent", home, ...args]);
      expect(refused.exitCode).toBe(126);
      expect(refused.stderr).toContain(words);
    }
    expect(existsSync(join(home, "workspaces"))).toBe(false);
  }, 60_000);

  it("takes the bearer token from DELTA_MCP_TOKEN, serves a client that sends it, and keeps it from the runs", async () => {
    const workDir = mkdtempSync(join(root, "ws-"));
    const server = await startHttpServer(workDir, { DELTA_MCP_TOKEN: "s3cret-token-of-the-user" }, ["--host", "0.0.0.0"]);
    const url = server.url.replace("0.0.0.0", "127.0.0.1");
    try {
      expect((await post(url, {})).status).toBe(401);
      expect((await post(url, { authorization: "Bearer wrong-token" })).status).toBe(401);
      const client = new Client({ name: "t", version: "1" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: "Bearer s3cret-token-of-the-user" } } }));
      const answer = (await client.callTool({ name: "run", arguments: { task: "env dump", run_id: "token-run" } })) as ToolAnswer;
      expect(answer.structuredContent).toMatchObject({ status: "COMPLETED" });
      // The run's tool saw the environment, but not the token.
      const seen = actionResults(workDir, "token-run").map((event) => JSON.stringify(event)).join("\n");
      expect(seen).toContain("PATH=");
      expect(seen).not.toContain("s3cret-token-of-the-user");
      await client.close();
    } finally {
      server.proc.kill("SIGTERM");
    }
  }, 60_000);
});
