// End to end: real MCP servers from npm as tools of a run, driven by the scripted model: calls, results, journal, hooks, environment, secrets.
import { bundleProbe } from "../support/bundle-probe.js";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { EVERYTHING_ENTRY, everythingServer, filesystemServer, logged, loggedRequests, stdioServerYaml, toolCalls } from "../support/mcp-servers.js";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { groupEmptiesSoon } from "../support/processes.js";
import { actionResults, collectFiles, delta, listIo, modelEnv, readEvents, readMetadataFile, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-mcp-");
let model: MockLlm;

function mcpAgent(name: string, servers: string, extra: { tools?: string; hooksYaml?: string; files?: Record<string, string> } = {}): string {
  return writeAgent(root, { agentYaml: `name: ${name}\nllm:\n  model: mock-model\n${extra.tools ?? ""}mcp_servers:\n${servers}`, hooksYaml: extra.hooksYaml, files: extra.files }, name);
}

function requests(ws: string, runId: string): EventOf<"ACTION_REQUEST">[] {
  return readEvents(ws, runId).filter((event): event is EventOf<"ACTION_REQUEST"> => event.type === "ACTION_REQUEST");
}

describe("a stdio MCP server as tools (the reference filesystem server)", () => {
  it("runs a call, journals it like an exec tool before the server hears of it, and its result reaches the next request", async () => {
    model = await serve([
      reply.toolCalls([{ name: "fs__write_file", arguments: { path: "notes.txt", content: "apples\npears\n" } }]),
      reply.toolCalls([{ name: "fs__read_text_file", arguments: { path: "notes.txt" } }, { name: "fs__read_text_file", arguments: { path: "big.txt" } }]),
      reply.text("done"),
    ]);
    const log = join(root, "fs-requests.log");
    const ws = join(root, "ws-fs");
    mkdirSync(ws);
    const big = Array.from({ length: 4000 }, (_, line) => `line ${String(line).padStart(4, "0")} of a file too long to show whole`).join("\n");
    writeFileSync(join(ws, "big.txt"), big);
    const server = stdioServerYaml("fs", logged(log, filesystemServer("${CWD}")), `    env:\n      REQUEST_LOG_JOURNAL: "\${CWD}/.delta/fs1/journal.jsonl"\n`);
    const agent = mcpAgent("agent-fs", server);
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "fs1", "-m", "keep notes", "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", result: "done" });

    expect(readFileSync(join(ws, "notes.txt"), "utf8")).toBe("apples\npears\n");
    // Without cwd, a stdio server runs in the workspace.
    expect(loggedRequests(log).find((entry) => entry.event === "start")!.cwd).toBe(realpathSync(ws));
    expect(requests(ws, "fs1").map((event) => event.resolved_command)).toEqual([["mcp", "fs", "write_file"], ["mcp", "fs", "read_text_file"], ["mcp", "fs", "read_text_file"]]);
    const results = actionResults(ws, "fs1");
    expect(results.map((event) => [event.tool_name, event.status, event.exit_code])).toEqual([["fs__write_file", "SUCCESS", null], ["fs__read_text_file", "SUCCESS", null], ["fs__read_text_file", "SUCCESS", null]]);
    expect(toolResultsOf(model.requests[2]!).slice(0, 2)).toEqual(["Successfully wrote to notes.txt", "apples\npears\n"]);
    // A long result is bounded as any tool's output: its head and tail, with what was cut counted between.
    const bounded = results[2]!.observation_content;
    expect(Buffer.byteLength(bounded)).toBeLessThan(64 * 1024 + 100);
    expect(bounded).toMatch(/^line 0000 of a file[\s\S]*\n\[\.\.\. \d+ bytes omitted \.\.\.\]\n[\s\S]*line 3999 of a file too long to show whole$/);
    // Each call reached the server only once its ACTION_REQUEST was in the journal on disk.
    expect(loggedRequests(log).filter((entry) => entry.method === "tools/call").map((entry) => [entry.tool, (entry as { journaled?: boolean }).journaled])).toEqual([
      ["write_file", true],
      ["read_text_file", true],
      ["read_text_file", true],
    ]);

    const offered = (model.requests[0]!.body as { tools: { function: { name: string; parameters: { properties: Record<string, unknown>; required: string[] } } }[] }).tools;
    const readText = offered.find((tool) => tool.function.name === "fs__read_text_file")!;
    expect(readText.function.parameters.required).toEqual(["path"]);
    expect(Object.keys(readText.function.parameters.properties)).toEqual(expect.arrayContaining(["path", "head", "tail"]));
    expect(offered.map((tool) => tool.function.name)).toContain("ask_human");

    const records = listIo(ws, "fs1", "tool_executions").map((file) => JSON.parse(readFileSync(join(runDir(ws, "fs1"), "io", "tool_executions", file), "utf8")));
    expect(records.map((record) => [record.mcp_server, record.mcp_tool, record.command])).toEqual([
      ["fs", "write_file", ["mcp", "fs", "write_file"]],
      ["fs", "read_text_file", ["mcp", "fs", "read_text_file"]],
      ["fs", "read_text_file", ["mcp", "fs", "read_text_file"]],
    ]);
    expect(records[1].result.content).toEqual([{ type: "text", text: "apples\npears\n" }]);
    expect(records[2].result.content[0].text).toBe(big);

    const start = readEvents(ws, "fs1")[0] as EventOf<"ENGINE_START">;
    expect(start.config).toMatchObject({ mcp_servers: ["fs"], tools: expect.arrayContaining(["fs__write_file", "fs__read_text_file"]) });
    const [recorded] = readMetadataFile(ws, "fs1").mcp_server_processes as { server: string; pid: number }[];
    expect(recorded!.server).toBe("fs");
    expect(await groupEmptiesSoon(recorded!.pid)).toBe(true);
  });

  it("refuses (126) an MCP tool offered under an exec tool's name, naming both, before any trace", async () => {
    const agent = mcpAgent("agent-clash", stdioServerYaml("fs", filesystemServer("${CWD}")), { tools: 'tools:\n  - name: fs__read_text_file\n    exec: "cat ${path}"\n' });
    const ws = join(root, "ws-clash");
    const run = await delta(["run", "--agent", agent, "-w", ws, "-m", "x", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error).toEqual({
      type: "MCP_SERVER_ERROR",
      message:
        `Two tools would be offered to the model as 'fs__read_text_file': the tool 'fs__read_text_file' defined in ${join(agent, "agent.yaml")}, and tool 'read_text_file' of MCP server 'fs' (${join(agent, "agent.yaml")}: mcp_servers[0]). Rename the tool, or deny one of them with tools.deny.`,
    });
    expect(existsSync(ws)).toBe(false);
  });

  it("delta tool expand starts the servers and lists their tools with the schemas the model is offered", async () => {
    const agent = mcpAgent("agent-expand", stdioServerYaml("fs", filesystemServer("${CWD}"), "    tools:\n      allow: [read_text_file, list_directory]\n"));
    const expand = await delta(["tool", "expand", agent], { cwd: root });
    expect(expand.exitCode, expand.stderr).toBe(0);
    const view = parse(expand.stdout) as { tools: unknown[]; mcp_tools: { name: string; command: string[]; input_schema: { properties: Record<string, unknown> } }[] };
    expect(view.tools).toEqual([]);
    expect(view.mcp_tools.map((tool) => [tool.name, tool.command])).toEqual([["fs__read_text_file", ["mcp", "fs", "read_text_file"]], ["fs__list_directory", ["mcp", "fs", "list_directory"]]]);
    expect(view.mcp_tools[0]!.input_schema.properties).toHaveProperty("path");
  });

  it("delta tool list --agent prints one line per tool the model is offered: exec, MCP, built-in", async () => {
    const agent = mcpAgent("agent-list", stdioServerYaml("fs", filesystemServer("${CWD}"), "    tools:\n      allow: [list_directory]\n"), { tools: 'tools:\n  - name: count\n    description: Count lines\n    exec: "wc -l ${path}"\n' });
    const list = await delta(["tool", "list", "--agent", agent], { cwd: root });
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout.split("\n").map((line) => line.split(/\s{2,}/).slice(0, 2))).toEqual([["count", "exec"], ["fs__list_directory", "mcp fs"], ["ask_human", "built-in"], [""]]);
    expect(list.stdout).toContain("Count lines\n");
    const missing = await delta(["tool", "list"]);
    expect(missing.exitCode).toBe(126);
    expect(missing.stderr).toContain("delta tool list needs the agent");
  });
});

describe("the MCP client is loaded only for an agent with mcp_servers", () => {
  /** Runs `delta` with the bundle probe; returns the names of the bundles of dist/ it read. */
  async function bundlesRead(name: string, args: string[], env: Record<string, string>): Promise<string[]> {
    const probe = bundleProbe(root, name);
    const run = await delta(args, { env: { ...env, ...probe.env } });
    expect(run.exitCode, run.stderr).toBe(0);
    return probe.bundlesRead();
  }

  it("a run without servers never reads the SDK's bundle; a run with one does", async () => {
    model = await serve([reply.text("plain"), reply.text("served")]);
    const plain = writeAgent(root, { agentYaml: "name: agent-plain\nllm:\n  model: mock-model\n" }, "agent-plain");
    const served = mcpAgent("agent-served", stdioServerYaml("fs", filesystemServer("${CWD}")));
    const env = modelEnv(model.baseUrl);
    const withoutServers = await bundlesRead("plain", ["run", "--agent", plain, "-y", "-m", "hi"], env);
    expect(withoutServers).toContain("delta.cjs");
    expect(withoutServers).not.toContain("delta-mcp-sdk.cjs");
    expect(withoutServers).not.toContain("delta-mcp-server-sdk.cjs");
    expect(await bundlesRead("served", ["run", "--agent", served, "-y", "-m", "hi"], env)).toEqual(expect.arrayContaining(["delta.cjs", "delta-mcp-sdk.cjs"]));
  });
});

describe("results, hooks and the environment (the reference everything server)", () => {
  it("runs the server in its cwd, describes an image, makes isError an ERROR, refuses arguments that are not an object, and lets hooks block a call before the server hears of it", async () => {
    model = await serve([
      reply.toolCalls([
        { name: "ev__get-tiny-image", arguments: {} },
        { name: "ev__echo", arguments: { message: 5 } },
        { name: "ev__get-env", arguments: {} },
        { name: "ev__echo", arguments: '["not", "an object"]' },
      ]),
      reply.text("seen"),
    ]);
    const log = join(root, "ev-requests.log");
    const ws = join(root, "ws-ev");
    const guard = "#!/bin/sh\nif [ \"$TOOL_NAME\" = ev__get-env ]; then echo 'no environment dumps' >&2; exit 2; fi\n";
    const agent = mcpAgent("agent-ev", stdioServerYaml("ev", logged(log, everythingServer()), '    cwd: "${AGENT_HOME}/data"\n'), {
      hooksYaml: "pre_tool_execution:\n  command: ['${AGENT_HOME}/guard.sh']\npost_tool_execution:\n  command: [sh, -c, 'echo \"$TOOL_NAME\" >> seen.txt']\n",
      files: { "guard.sh": guard, "data/README": "the server runs here\n" },
    });
    chmodSync(join(agent, "guard.sh"), 0o755);
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "ev1", "-m", "look", "--format", "json"], { env: modelEnv(model.baseUrl) });
    expect(run.exitCode, run.stderr).toBe(0);

    const [image, echo, env, notObject] = actionResults(ws, "ev1");
    expect(image).toMatchObject({ status: "SUCCESS", observation_content: expect.stringMatching(/\[image: image\/png, \d+\.\d KiB\]/) });
    expect(image!.observation_content).not.toMatch(/iVBOR/);
    expect(echo).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining("Input validation error") });
    expect(env).toMatchObject({ status: "ERROR", observation_content: "Blocked by pre_tool_execution hook: no environment dumps" });
    expect(notObject).toMatchObject({ status: "ERROR", observation_content: "Arguments for 'ev__echo' must be a JSON object." });
    expect(requests(ws, "ev1").map((event) => event.resolved_command)).toEqual([["mcp", "ev", "get-tiny-image"], ["mcp", "ev", "echo"], null, null]);
    expect(toolCalls(log)).toEqual(["get-tiny-image", "echo"]);
    // The server answered the echo with a result it marks isError (not a protocol error): that is what made it an ERROR.
    const echoed = listIo(ws, "ev1", "tool_executions").map((file) => JSON.parse(readFileSync(join(runDir(ws, "ev1"), "io", "tool_executions", file), "utf8"))).find((record) => record.mcp_tool === "echo");
    expect(echoed).toMatchObject({ error: null, result: { isError: true } });
    expect(readFileSync(join(ws, "seen.txt"), "utf8")).toBe("ev__get-tiny-image\nev__echo\nev__get-env\nev__echo\n");
    expect(loggedRequests(log).find((entry) => entry.event === "start")!.cwd).toBe(realpathSync(join(agent, "data")));
  });

  it("starts a server without the engine's API key, with its own env, keeps its secrets from tools, and never writes them", async () => {
    model = await serve([reply.toolCalls([{ name: "ev__get-env", arguments: {} }, { name: "show_env", arguments: {} }]), reply.text("ok")]);
    const ws = join(root, "ws-env");
    const token = "svc-token-0123456789abcdef";
    const agent = mcpAgent("agent-env", stdioServerYaml("ev", everythingServer(), "    env:\n      SERVICE_MODE: audit\n      SERVICE_TOKEN: {env: DELTA_TEST_SERVICE_TOKEN}\n"), {
      tools: 'tools:\n  - name: show_env\n    exec: "env"\n',
    });
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "env1", "-m", "env", "--format", "json"], { env: modelEnv(model.baseUrl, { DELTA_TEST_SERVICE_TOKEN: token }) });
    expect(run.exitCode, run.stderr).toBe(0);
    const seen = toolResultsOf(model.requests[1]!)[0]!;
    expect(seen).toContain('"SERVICE_MODE": "audit"');
    expect(seen).toContain(`"DELTA_CWD": "${ws}"`);
    expect(seen).not.toContain("DELTA_API_KEY");
    expect(seen).not.toContain("sk-test-secret-key-123");
    // The server got the token under the name agent.yaml gives it, and not the variable it was read from.
    expect(seen).not.toContain("DELTA_TEST_SERVICE_TOKEN");
    // What the server printed is journaled redacted, and the model's context is built from the journal.
    expect(seen).toContain('"SERVICE_TOKEN": "[REDACTED]"');
    expect(seen).not.toContain(token);
    // A tool never gets a value an MCP server was given, under any name.
    const toolEnv = toolResultsOf(model.requests[1]!)[1]!;
    expect(toolEnv).toContain(`DELTA_CWD=${ws}`);
    expect(toolEnv).not.toContain("DELTA_TEST_SERVICE_TOKEN");
    expect(toolEnv).not.toContain("[REDACTED]");
    for (const file of collectFiles(runDir(ws, "env1"))) expect(readFileSync(file, "utf8"), file).not.toContain(token);
  });

  it("refuses (126) a server whose {env: NAME} is not set, naming the variable", async () => {
    const agent = mcpAgent("agent-noenv", stdioServerYaml("ev", everythingServer(), "    env:\n      SERVICE_TOKEN: {env: DELTA_TEST_UNSET_TOKEN}\n"));
    const run = await delta(["run", "--agent", agent, "-y", "-m", "x", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(run.exitCode).toBe(126);
    expect(JSON.parse(run.stdout).error.message).toBe(
      `MCP server 'ev' (${join(agent, "agent.yaml")}: mcp_servers[0]): env.SERVICE_TOKEN reads the environment variable DELTA_TEST_UNSET_TOKEN, which is not set; export it before the run`,
    );
  });
});

describe("a Streamable HTTP server (the everything server over HTTP)", () => {
  let everything: ChildProcess;
  let front: Server;
  let url: string;
  const authorizations: (string | undefined)[] = [];
  /** The tools/call requests the server was sent, by tool name. */
  const httpCalls: string[] = [];

  beforeAll(async () => {
    const port = await freePort();
    everything = spawn(process.execPath, [EVERYTHING_ENTRY, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
    await new Promise<void>((resolve) => everything.stderr!.on("data", (chunk: Buffer) => chunk.toString().includes("listening") && resolve()));
    // In front of it, on 127.0.0.1: records the Authorization header and the tool calls of each request, passes everything on.
    front = createServer((incoming, outgoing) => {
      authorizations.push(incoming.headers.authorization);
      const body: Buffer[] = [];
      incoming.on("data", (chunk: Buffer) => body.push(chunk));
      incoming.on("end", () => httpCalls.push(...toolCallsIn(Buffer.concat(body).toString())));
      const forwarded = request({ host: "127.0.0.1", port, path: incoming.url, method: incoming.method, headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      incoming.pipe(forwarded);
    });
    await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(front.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    everything?.kill("SIGKILL");
    front?.closeAllConnections();
    await new Promise((resolve) => front?.close(resolve));
  });

  it("sends the header read from the environment, and redacts its value wherever the run writes", async () => {
    const token = "mcp-header-token-9876543210";
    model = await serve([reply.toolCalls([{ name: "web__echo", arguments: { message: `my token is ${token}` } }]), reply.text("echoed")]);
    const ws = join(root, "ws-http");
    const agent = mcpAgent("agent-http", `  - name: web\n    url: ${url}\n    headers:\n      Authorization: {env: DELTA_TEST_MCP_TOKEN, prefix: "Bearer "}\n    tools:\n      allow: [echo]\n`);
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "web1", "-m", "echo", "--format", "json"], { env: modelEnv(model.baseUrl, { DELTA_TEST_MCP_TOKEN: token }) });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(authorizations.length).toBeGreaterThan(2);
    expect(new Set(authorizations)).toEqual(new Set([`Bearer ${token}`]));
    expect(actionResults(ws, "web1")[0]).toMatchObject({ status: "SUCCESS", observation_content: "Echo: my token is [REDACTED]" });
    expect(requests(ws, "web1")[0]!.resolved_command).toEqual(["mcp", "web", "echo"]);
    for (const file of collectFiles(runDir(ws, "web1"))) expect(readFileSync(file, "utf8"), file).not.toContain(token);
  });

  it("offers all but the denied tools, describes resource links, and makes a call past timeout_ms an ERROR while the run goes on", async () => {
    // Long enough for a busy machine's initialize and tools/list, well short of the 30 s operation.
    const TIMEOUT_MS = 10_000;
    model = await serve([
      reply.toolCalls([
        { name: "web__get-resource-links", arguments: { count: 2 } },
        { name: "web__echo", arguments: { message: "denied" } },
        { name: "web__trigger-long-running-operation", arguments: { duration: 30, steps: 30 } },
      ]),
      reply.text("noted"),
    ]);
    httpCalls.length = 0;
    const ws = join(root, "ws-http-deny");
    const agent = mcpAgent("agent-http-deny", `  - name: web\n    url: ${url}\n    headers:\n      Authorization: {env: DELTA_TEST_MCP_TOKEN, prefix: "Bearer "}\n    tools:\n      deny: [echo, get-env]\n    timeout_ms: ${TIMEOUT_MS}\n`);
    const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "web2", "-m", "look", "--format", "json"], { env: modelEnv(model.baseUrl, { DELTA_TEST_MCP_TOKEN: "t" }) });
    expect(run.exitCode, run.stderr).toBe(0);

    const offered = (model.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    expect(offered).toEqual(expect.arrayContaining(["web__get-resource-links", "web__trigger-long-running-operation", "web__get-sum"]));
    expect(offered).not.toContain("web__echo");
    expect(offered).not.toContain("web__get-env");

    const [links, denied, slow] = actionResults(ws, "web2");
    expect(links).toMatchObject({ status: "SUCCESS" });
    expect(links!.observation_content.split("\n")).toEqual([
      "Here are 2 resource links to resources available in this server:",
      "[resource link: demo://resource/dynamic/blob/1 (Blob Resource 1), text/plain]",
      "[resource link: demo://resource/dynamic/text/2 (Text Resource 2), text/plain]",
    ]);
    expect(denied).toMatchObject({ status: "ERROR", observation_content: expect.stringMatching(/^Unknown tool 'web__echo'/) });
    expect(slow).toMatchObject({ status: "ERROR", observation_content: `[timed out after ${TIMEOUT_MS} ms; the request was cancelled]` });
    expect(slow!.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    // The denied tool never reached the server; the others did, once each.
    expect(httpCalls).toEqual(["get-resource-links", "trigger-long-running-operation"]);

    const records = listIo(ws, "web2", "tool_executions").map((file) => JSON.parse(readFileSync(join(runDir(ws, "web2"), "io", "tool_executions", file), "utf8")));
    expect(records.map((record) => [record.mcp_tool, record.timed_out])).toEqual([["get-resource-links", false], ["trigger-long-running-operation", true]]);
    expect(records[0].result.content.filter((item: { type: string }) => item.type === "resource_link")).toHaveLength(2);
  });

  it("refuses (126) a url server nobody answers at, naming it and where it is, never the query string", async () => {
    const port = await freePort();
    const agent = mcpAgent("agent-http-gone", `  - name: web\n    url: http://127.0.0.1:${port}/mcp?key=secret-in-query\n    timeout_ms: 3000\n`);
    const run = await delta(["run", "--agent", agent, "-y", "-m", "x", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1") });
    expect(run.exitCode).toBe(126);
    const { error } = JSON.parse(run.stdout) as { error: { type: string; message: string } };
    expect(error.type).toBe("MCP_SERVER_ERROR");
    expect(error.message).toMatch(new RegExp(`^MCP server 'web' \\(/\\S+/agent\\.yaml: mcp_servers\\[0\\]\\) failed at initialize: .*; the server is at http://127\\.0\\.0\\.1:${port}/mcp$`));
    expect(run.stdout + run.stderr).not.toContain("secret-in-query");
  });
});

/** The names of the tools a JSON-RPC POST body (one message or a batch) calls. */
function toolCallsIn(body: string): string[] {
  if (body === "") return [];
  const parsed = JSON.parse(body) as { method?: string; params?: { name?: string } } | { method?: string; params?: { name?: string } }[];
  return (Array.isArray(parsed) ? parsed : [parsed]).filter((message) => message.method === "tools/call").map((message) => message.params?.name ?? "");
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
