// End to end: `delta mcp serve --http` admits only its user — a token on loopback too (another local user is refused), its own Host, bodies bounded before they are read, sessions bounded.
import { execa } from "execa";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, modelEnv, setUpE2e, waitFor, writeAgent } from "./harness.js";

const INITIALIZE = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } } };
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

const { root, serve: serveModel } = setUpE2e("delta-mcp-doors-");
let llm: MockLlm;
let agent: string;
beforeAll(async () => {
  llm = await serveModel((request) => reply.text(`done: ${taskOf(request)}`));
  // Anyone may pass through the test's folder: only the state folder's and the token file's own modes keep others out.
  chmodSync(root, 0o755);
  agent = writeAgent(root);
});

interface Served {
  url: string;
  port: number;
  token: string;
  stderr: () => string;
  proc: ChildProcess;
}

const servers: ChildProcess[] = [];
afterAll(async () => {
  for (const proc of servers) {
    proc.kill("SIGTERM");
    if (proc.exitCode === null) await new Promise((resolve) => proc.once("exit", resolve));
  }
});

/** `delta mcp serve --http 0` with its state folder under `stateHome`; resolves once it says where its token is. */
async function serve(stateHome: string, extraEnv: Record<string, string> = {}, extraArgs: string[] = []): Promise<Served> {
  const workDir = join(root, `ws-${servers.length}`);
  const proc = spawn(process.execPath, [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", workDir, "--http", "0", ...extraArgs], {
    env: { ...process.env, ...NO_MODEL_KEYS, ...modelEnv(llm.baseUrl), XDG_STATE_HOME: stateHome, ...extraEnv },
    stdio: ["ignore", "ignore", "pipe"],
  });
  servers.push(proc);
  let stderr = "";
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  await waitFor(() => /listening on/.test(stderr) || proc.exitCode !== null, 20_000, "the server to listen");
  const url = /listening on (\S+)/.exec(stderr)?.[1];
  if (url === undefined) throw new Error(`the server did not start: ${stderr}`);
  const file = /the token in the file (\S+)/.exec(stderr)?.[1];
  const token = extraEnv.DELTA_MCP_TOKEN ?? (file === undefined ? "" : readFileSync(file, "utf8").trim());
  return { url, port: Number(new URL(url).port), token, stderr: () => stderr, proc };
}

/** One HTTP request as node:http sends it (fetch will not set Host), body written in `chunks`; resolves at the status, whatever was left unsent. */
function raw(port: number, options: { method?: string; headers?: Record<string, string>; chunks?: (string | Buffer)[]; end?: boolean }): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path: "/mcp", method: options.method ?? "POST", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      res.on("error", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    for (const chunk of options.chunks ?? []) req.write(chunk);
    if (options.end !== false) req.end();
  });
}

const initialize = (served: Served, headers: Record<string, string> = {}) =>
  raw(served.port, { headers: { ...JSON_HEADERS, host: `127.0.0.1:${served.port}`, authorization: `Bearer ${served.token}`, ...headers }, chunks: [JSON.stringify(INITIALIZE)] });

/** What user `nobody` gets from the server: an initialize and a run without the token, and a read of the token file. */
const INTRUDER = `
import { readFileSync } from "node:fs";
const [url, tokenFile] = process.argv.slice(1);
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const post = (body, session) => fetch(url, { method: "POST", headers: session ? { ...headers, "mcp-session-id": session } : headers, body: JSON.stringify(body) });
const out = {};
const init = await post(${JSON.stringify(INITIALIZE)});
out.initialize = init.status;
const session = init.headers.get("mcp-session-id");
await init.text();
if (session) {
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session)).text();
  const call = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "run", arguments: { task: "an intruder's task", run_id: "intruder" } } }, session);
  out.call = call.status;
  out.answer = await call.text();
}
try {
  readFileSync(tokenFile);
  out.read = "read";
} catch (err) {
  out.read = err.code;
}
console.log(JSON.stringify(out));
`;

describe("delta mcp serve --http on loopback", () => {
  it("refuses another local user (no token: 401), who cannot read the token file either; the model is never called for them", async () => {
    const stateHome = join(root, "state-intruder");
    const served = await serve(stateHome);
    const tokenFile = join(stateHome, "delta", "mcp-token");
    const intruder = await execa("setpriv", ["--reuid", "nobody", "--regid", "nogroup", "--clear-groups", "--", process.execPath, "--input-type=module", "-e", INTRUDER, served.url, tokenFile], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp" },
      extendEnv: false,
      cwd: "/",
      reject: false,
      timeout: 60_000,
    });
    expect(intruder.exitCode, String(intruder.stderr)).toBe(0);
    expect(JSON.parse(String(intruder.stdout))).toEqual({ initialize: 401, read: "EACCES" });
    expect(llm.requests.filter((request) => taskOf(request) === "an intruder's task")).toEqual([]);
    expect(served.stderr()).toContain(`the token in the file ${tokenFile}`);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateHome, "delta")).mode & 0o777).toBe(0o700);
  }, 90_000);

  it("answers only to its own Host: a page reached through DNS rebinding (another name, or another port) is refused with 403", async () => {
    const served = await serve(join(root, "state-host"));
    const rebound = await initialize(served, { host: `attacker.example:${served.port}` });
    expect(rebound.status).toBe(403);
    expect((JSON.parse(rebound.body) as { error: { message: string } }).error.message).toContain(`Host "attacker.example:${served.port}" is not this server's`);
    expect((await initialize(served, { host: `127.0.0.1:${served.port + 1}` })).status).toBe(403);
    expect((await initialize(served, { host: `localhost:${served.port}` })).status).toBe(200);
    expect((await initialize(served)).status).toBe(200);
  }, 60_000);

  it("bounds a request body before reading it: a declared 700 MB body and an unannounced 5 MB one are refused with 413, and the server goes on", async () => {
    const served = await serve(join(root, "state-body"));
    const headers = { ...JSON_HEADERS, host: `127.0.0.1:${served.port}`, authorization: `Bearer ${served.token}` };
    // Only the headers and 1 KiB are sent: the answer comes without the rest ever being read.
    const declared = await raw(served.port, { headers: { ...headers, "content-length": String(700 << 20) }, chunks: ["x".repeat(1024)], end: false });
    expect(declared.status).toBe(413);
    expect(declared.body).toContain(`larger than ${4 << 20} bytes`);
    const megabyte = Buffer.alloc(1 << 20, "x");
    const chunked = await raw(served.port, { headers: { ...headers, "transfer-encoding": "chunked" }, chunks: [megabyte, megabyte, megabyte, megabyte, megabyte], end: false });
    expect(chunked.status).toBe(413);
    expect((await initialize(served)).status).toBe(200);
  }, 60_000);

  it("bounds the sessions open at once (503 past 32), and takes a new one once one has ended", async () => {
    const served = await serve(join(root, "state-sessions"));
    const opened: string[] = [];
    for (let index = 0; index < 32; index += 1) {
      const answer = await initialize(served);
      expect(answer.status).toBe(200);
      opened.push(String(answer.headers["mcp-session-id"]));
    }
    const refused = await initialize(served);
    expect(refused.status).toBe(503);
    expect(refused.body).toContain("32 sessions are open, the most this server keeps");
    const ended = await raw(served.port, { method: "DELETE", headers: { host: `127.0.0.1:${served.port}`, authorization: `Bearer ${served.token}`, "mcp-session-id": opened[0]! } });
    expect(ended.status).toBe(200);
    expect((await initialize(served)).status).toBe(200);
  }, 90_000);
});

describe("the token of delta mcp serve --http", () => {
  it("is made once into the user's state folder and kept: a second server answers to the same token, a wrong one gets 401", async () => {
    const stateHome = join(root, "state-kept");
    const first = await serve(stateHome);
    const second = await serve(stateHome);
    expect(second.token).toBe(first.token);
    expect(first.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await initialize(second)).status).toBe(200);
    expect((await initialize(second, { authorization: `Bearer ${first.token}x` })).status).toBe(401);
    expect((await initialize(second, { authorization: "" })).status).toBe(401);
  }, 60_000);

  it("comes from --token-file (yours, mode 600) over DELTA_MCP_TOKEN; one others can read, a short one, or one inside the workspace is refused (126) before a workspace is made", async () => {
    const dir = join(root, "token-files");
    mkdirSync(dir);
    const file = join(dir, "token");
    writeFileSync(file, "a-token-from-a-file-1234567\n", { mode: 0o600 });
    const served = await serve(join(root, "state-file"), { DELTA_MCP_TOKEN: "the-variable-token-is-not-used" }, ["--token-file", file]);
    expect(served.stderr()).toContain(`the token in the file ${file}`);
    expect((await initialize({ ...served, token: "a-token-from-a-file-1234567" })).status).toBe(200);
    expect((await initialize({ ...served, token: "the-variable-token-is-not-used" })).status).toBe(401);

    const env = { XDG_STATE_HOME: join(root, "state-refused") };
    chmodSync(file, 0o644);
    const open = await delta(["mcp", "serve", "--agent", agent, "--http", "0", "--token-file", file], { env });
    expect(open.exitCode).toBe(126);
    expect(open.stderr).toContain(`can be read or written by others (mode 644); anyone who reads it can start runs as you: chmod 600 ${file}`);
    const short = await delta(["mcp", "serve", "--agent", agent, "--http", "0"], { env: { ...env, DELTA_MCP_TOKEN: "short" } });
    expect(short.exitCode).toBe(126);
    expect(short.stderr).toContain("DELTA_MCP_TOKEN: the token must be at least 16 printable characters");
    const inside = await delta(["mcp", "serve", "--agent", agent, "--http", "0"], { env: { XDG_STATE_HOME: join(agent, "state") } });
    expect(inside.exitCode).toBe(126);
    expect(inside.stderr).toContain(`lies inside ${agent}, where the runs' tools can read it`);
    const stdio = await delta(["mcp", "serve", "--agent", agent, "--token-file", file], { env });
    expect(stdio.exitCode).toBe(126);
    expect(stdio.stderr).toContain("--token-file applies to --http <port>");
    expect(() => statSync(join(agent, "workspaces"))).toThrow();
  }, 60_000);
});
