// The box's walls on a real machine: a boxed tool reaches no Unix socket of the host with network off, no other call's proxy, no descriptor the engine's caller left open, not the agent's files, and floods no record.
import { spawn } from "node:child_process";
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionResults, DELTA_BIN, delta, listIo, modelEnv, NO_MODEL_KEYS, readEvents, removeDir, tempDir, waitFor, writeAgent } from "../e2e/harness.js";
import { reply, startMockLlm, type MockLlm } from "../support/mock-llm.js";
import { requireBinary } from "../support/system-packages.js";
import { engineCodeFolders, enginePackage } from "../../src/process/sandbox/engine-code.js";

const RUN_TOOL = '  - name: run\n    exec: "sh -c ${script}"\n';
const BOX = "{mode: workspace-write}";

let root: string;
/** Outside /tmp, so the boxes see it (read-only): where the host's sockets and a TMPDIR outside /tmp live. */
let visible: string;
beforeAll(() => {
  requireBinary("bwrap");
  requireBinary("curl");
  root = tempDir("delta-walls-");
  mkdirSync("/var/tmp", { recursive: true });
  visible = mkdtempSync("/var/tmp/delta-walls-");
});
afterAll(() => {
  removeDir(root);
  removeDir(visible);
});

interface Boxed {
  exitCode: number;
  stdout: string;
  stderr: string;
  ws: string;
  agent: string;
  observation: string;
}

let cases = 0;

/** A new agent (agent.yaml's `sandbox:` block as given) whose model calls `run` with `script` once, run in `ws` (by default W001 inside the agent). */
async function runScript(script: string, sandbox: string, options: { ws?: (agent: string) => string; agentName?: string; env?: Record<string, string>; descriptors?: Record<number, number> } = {}): Promise<Boxed> {
  const server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script } }]), reply.text("done")]);
  try {
    const dir = join(root, `case-${++cases}`);
    mkdirSync(dir);
    const agent = writeAgent(dir, { agentYaml: `name: walls\nllm:\n  model: mock-model\nsandbox: ${sandbox}\ntools:\n${RUN_TOOL}` }, options.agentName);
    const ws = options.ws?.(agent) ?? join(agent, "W001");
    mkdirSync(ws, { recursive: true });
    const result = await deltaWith(["run", "--agent", agent, "-w", ws, "-m", "go", "--run-id", "r1", "--format", "json"], modelEnv(server.baseUrl, options.env), options.descriptors ?? {});
    const results = existsSync(join(ws, ".delta", "r1", "journal.jsonl")) ? actionResults(ws, "r1") : [];
    return { ...result, ws, agent, observation: results[0]?.observation_content ?? "" };
  } finally {
    await server.close();
  }
}

/** The real binary, with each of this process's descriptors in `descriptors` open in it at the number it is keyed by (as `exec 200<dir` in a calling shell leaves it). */
function deltaWith(args: string[], env: Record<string, string>, descriptors: Record<number, number>, bin = DELTA_BIN): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const stdio: (number | "ignore" | "pipe")[] = ["ignore", "pipe", "pipe"];
  for (const [at, fd] of Object.entries(descriptors)) {
    while (stdio.length <= Number(at)) stdio.push("ignore");
    stdio[Number(at)] = fd;
  }
  const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...NO_MODEL_KEYS, ...env }, stdio });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ exitCode: code ?? -1, stdout, stderr })));
}

/** An HTTP server on a Unix socket of the host, in a folder every box sees read-only. */
async function hostSocket(name: string): Promise<{ path: string; server: Server }> {
  const path = join(visible, `${name}.sock`);
  const server = createServer((_req, res) => res.end(`hello from the host's ${name}\n`));
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, server };
}

describe("host Unix sockets", () => {
  it("are unreachable with network off and through a host list (socket(AF_UNIX) refused); network: on reaches them, the user's choice", async () => {
    const { path, server } = await hostSocket("daemon");
    try {
      const script = `curl -sS --max-time 5 --unix-socket ${path} http://daemon/; node -e "require('net').connect('${path}').on('connect', function () { console.log('node: connected'); this.destroy(); }).on('error', (e) => console.log('node:', e.code))"`;
      for (const sandbox of [BOX, "{mode: workspace-write, network: [example.com]}"]) {
        const call = await runScript(script, sandbox);
        expect(call.observation).not.toContain("hello from the host's daemon");
        expect(call.observation).toContain("node: EPERM");
      }
      const open = await runScript(script, "{mode: workspace-write, network: on}");
      expect(open.observation).toContain("hello from the host's daemon");
    } finally {
      server.close();
    }
  });

  it("include datagram sockets: a datagram socketpair, which could send to one by its path, is refused", async () => {
    const path = join(visible, "datagrams.sock");
    const received: string[] = [];
    const listener = spawn("python3", ["-c", `import socket, sys\ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\ns.bind(sys.argv[1])\nprint("bound", flush=True)\nwhile True:\n    print(s.recv(100).decode(), flush=True)`, path], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      listener.stdout!.on("data", (chunk: Buffer) => received.push(chunk.toString()));
      await waitFor(() => received.join("").includes("bound"), 30_000, "the host's datagram socket");
      const script = [
        "python3 -c \"",
        "import socket, sys",
        "try:",
        "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)",
        "    a.sendto(b'datagram from the box', sys.argv[1])",
        "    print('sent')",
        "except OSError as e:",
        "    print('refused:', e.errno)",
        `\" ${path}`,
      ].join("\n");
      const call = await runScript(script, BOX);
      expect(call.exitCode, call.stderr).toBe(0);
      expect(call.observation).toContain("refused: 1");
      // network: on has no filter: the same script reaches the socket, which shows the probe would have.
      const open = await runScript(script, "{mode: workspace-write, network: on}");
      expect(open.observation).toContain("sent");
      await waitFor(() => received.join("").includes("datagram from the box"), 30_000, "the datagram of the network: on box");
      expect(received.join("").split("datagram from the box")).toHaveLength(2);
    } finally {
      listener.kill();
    }
  });

  it("leave what a box needs of its own: socketpair (a Node child's pipes), TCP on the box's loopback", async () => {
    const script = `node -e "require('child_process').execFile('echo', ['piped'], (e, out) => console.log(out.trim()))"; node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log('listening'); s.close(); })"`;
    const call = await runScript(script, BOX);
    expect(call.observation).toContain("piped");
    expect(call.observation).toContain("listening");
  });
});

describe("another call's proxy", () => {
  it("is out of reach of any box, network off or on, even with TMPDIR outside /tmp: its socket is in a private folder no box binds", async () => {
    const tmpdir = join(visible, "tmpdir");
    mkdirSync(tmpdir);
    const target = createServer((_req, res) => res.end("reached the allowed host\n"));
    await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
    const port = (target.address() as AddressInfo).port;
    const holding = join(root, "holding");
    try {
      // A proxied call that stays open until the other run is done.
      const first = runScript("touch started; while [ ! -e go ]; do sleep 0.05; done", `{mode: workspace-write, network: ["localhost:${port}"]}`, { ws: () => holding, env: { TMPDIR: tmpdir } });
      await waitFor(() => existsSync(join(holding, "started")), 60_000, "the proxied call to start");
      const sockets = readdirSync(tmpdir);
      const probe = [
        `find ${tmpdir} /tmp -name proxy.sock 2>/dev/null | sed 's/^/found: /'`,
        `for s in ${tmpdir}/delta-proxy-*/proxy.sock /tmp/delta-sockets-*/proxy-*/proxy.sock; do [ -S "$s" ] && curl -sS --max-time 5 --unix-socket "$s" -x http://proxy http://localhost:${port}/; done; true`,
      ].join("; ");
      // Network off (the seccomp program would refuse the socket too) and on (no filter: only the private folder stands).
      const others = [await runScript(probe, BOX, { env: { TMPDIR: tmpdir } }), await runScript(probe, "{mode: workspace-write, network: on}", { env: { TMPDIR: tmpdir } })];
      writeFileSync(join(holding, "go"), "");
      await first;
      expect(sockets).toEqual([]);
      for (const other of others) {
        expect(other.exitCode, other.stderr).toBe(0);
        expect(other.observation).not.toContain("found: ");
        expect(other.observation).not.toContain("reached the allowed host");
      }
    } finally {
      writeFileSync(join(holding, "go"), "");
      target.close();
    }
  });
});

describe("descriptors the engine's caller left open", () => {
  it("reach no child, boxed or not: the journal's folder open at 200 is nowhere in the tool", async () => {
    for (const sandbox of [BOX, "{mode: off}"]) {
      const dir = join(root, `fd-${++cases}`);
      mkdirSync(join(dir, "ws", ".delta"), { recursive: true });
      const fd = openSync(join(dir, "ws", ".delta"), "r");
      try {
        const script = 'readlink /proc/self/fd/200 2>/dev/null || echo "nothing at 200"; (echo planted > /proc/self/fd/200/planted) 2>/dev/null && echo wrote || echo "could not write"';
        const call = await runScript(script, sandbox, { ws: () => join(dir, "ws"), descriptors: { 200: fd } });
        expect(call.exitCode, call.stderr).toBe(0);
        expect(call.observation).toContain("nothing at 200");
        expect(call.observation).toContain("could not write");
        expect(existsSync(join(dir, "ws", ".delta", "planted"))).toBe(false);
      } finally {
        closeSync(fd);
      }
    }
  });
});

/** `continue` of the run in `ws` ends well, and no hook a tool planted ran (it would have touched <ws>/hooked). */
async function expectContinueRunsNoHook(ws: string): Promise<void> {
  const server = await startMockLlm([reply.text("again")]);
  try {
    const again = await delta(["continue", "-w", ws, "--run-id", "r1", "-m", "again"], { env: modelEnv(server.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(existsSync(join(ws, "hooked"))).toBe(false);
  } finally {
    await server.close();
  }
}

describe("the agent's folder as the workspace", () => {
  it("is refused under a writable box (126), naming the fix; nothing runs and nothing is written", async () => {
    const call = await runScript("echo x > hooks.yaml", BOX, { ws: (agent) => agent });
    expect(call.exitCode, call.stderr).toBe(126);
    expect(JSON.parse(call.stdout)).toMatchObject({ status: "REFUSED", error: { type: "SANDBOX_UNAVAILABLE" } });
    expect(JSON.parse(call.stdout).error.message).toContain("is the agent's own folder");
    expect(existsSync(join(call.agent, "hooks.yaml"))).toBe(false);
    expect(existsSync(join(call.agent, ".delta"))).toBe(false);
    // A read-only box may run there: it writes nothing.
    const readOnly = await runScript("echo x > hooks.yaml 2>&1 || echo denied", "{mode: read-only}", { ws: (agent) => agent });
    expect(readOnly.exitCode, readOnly.stderr).toBe(0);
    expect(existsSync(join(readOnly.agent, "hooks.yaml"))).toBe(false);
  });

  it("above the agent's folder keeps the agent's files read-only: a planted hooks.yaml never exists, so continue runs no hook", async () => {
    const script = 'A=$(basename "$DELTA_AGENT_HOME"); printf "post_tool_execution: {command: [touch, %s/hooked]}\\n" "$PWD" > "$A/hooks.yaml" 2>/dev/null && echo wrote || echo denied; echo x > "$A/agent.yaml" 2>/dev/null || echo denied-agent';
    const call = await runScript(script, BOX, { ws: (agent) => join(agent, "..") });
    expect(call.exitCode, call.stderr).toBe(0);
    expect(call.observation).toContain("denied");
    expect(call.observation).toContain("denied-agent");
    expect(existsSync(join(call.agent, "hooks.yaml"))).toBe(false);
    await expectContinueRunsNoHook(call.ws);
  });

  it("further above it, the folders between are pinned: none can be moved away to plant an agent at the agent's path for continue", async () => {
    // The agent at <ws>/team/agents/agent: moving team/ away (the agent's bind travels with it) would leave its path free to fill.
    const script = [
      'mv team moved 2>/dev/null && echo moved-team || echo pinned-team',
      'mv team/agents team/moved 2>/dev/null && echo moved-agents || echo pinned-agents',
      'mkdir -p team/agents/agent 2>/dev/null; printf "post_tool_execution: {command: [touch, %s/hooked]}\\n" "$PWD" > team/agents/agent/hooks.yaml 2>/dev/null && echo planted || echo not-planted',
      'touch team/beside && echo wrote-beside',
    ].join("; ");
    const call = await runScript(script, BOX, { agentName: "team/agents/agent", ws: (agent) => join(agent, "..", "..", "..") });
    expect(call.exitCode, call.stderr).toBe(0);
    expect(call.observation).toContain("pinned-team");
    expect(call.observation).toContain("pinned-agents");
    expect(call.observation).toContain("not-planted");
    // The folders between stay writable.
    expect(call.observation).toContain("wrote-beside");
    expect(existsSync(join(call.agent, "hooks.yaml"))).toBe(false);
    await expectContinueRunsNoHook(call.ws);
  });
});

describe("the proxy's record of refused connections", () => {
  let server: MockLlm | null = null;
  afterAll(async () => server?.close());

  it("stays bounded in count and length however many long names a tool asks for: 20 targets of at most 262 characters, the rest counted", async () => {
    const flood = [
      "const net = require('net');",
      "let left = 400;",
      "const next = () => { if (left-- <= 0) return;",
      "  const host = 'h' + left + '-' + 'x'.repeat(7000) + '.example';",
      "  const s = net.connect(3128, '127.0.0.1', () => s.write('CONNECT ' + host + ':443 HTTP/1.1\\r\\nHost: ' + host + ':443\\r\\n\\r\\n'));",
      "  s.on('data', () => s.destroy()); s.on('close', next); s.on('error', () => {}); };",
      "for (let i = 0; i < 4; i++) next();",
    ].join("\n");
    const dir = join(root, "flood");
    const agent = writeAgent(dir, { agentYaml: `name: flood\nllm:\n  model: mock-model\nsandbox: {mode: workspace-write, network: [example.com]}\ntools:\n${RUN_TOOL}` });
    const ws = join(agent, "W001");
    mkdirSync(ws);
    writeFileSync(join(ws, "flood.cjs"), flood);
    server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script: "node flood.cjs; echo flooded" } }]), reply.text("done")]);
    const result = await delta(["run", "--agent", agent, "-w", ws, "-m", "go", "--run-id", "r1"], { env: modelEnv(server.baseUrl), timeoutMs: 120_000 });
    expect(result.exitCode, result.stderr).toBe(0);
    const [action] = actionResults(ws, "r1");
    expect(action!.observation_content).toContain("flooded");
    expect(action!.observation_content).toMatch(/\[sandbox\] the network proxy refused (h\d+-x+…, ){4}h\d+-x+… and 395 more \(the call's record in io\/tool_executions\/ lists 20\)/);
    expect(Buffer.byteLength(action!.observation_content)).toBeLessThan(4096);
    const [record] = listIo(ws, "r1", "tool_executions");
    const io = JSON.parse(readFileSync(join(ws, ".delta", "r1", "io", "tool_executions", record!), "utf8")) as { sandbox: { refused_connections: string[]; refused_more: number } };
    expect(io.sandbox.refused_connections).toHaveLength(20);
    for (const target of io.sandbox.refused_connections) expect(target.length).toBeLessThanOrEqual(262);
    expect(io.sandbox.refused_more).toBe(380);
    const journal = readFileSync(join(ws, ".delta", "r1", "journal.jsonl"), "utf8");
    expect(journal.length).toBeLessThan(64 * 1024);
    expect(readEvents(ws, "r1").at(-1)?.type).toBe("ENGINE_END");
  }, 180_000);
});

describe("the engine's own code inside the workspace", () => {
  it("is read-only to a box, its packages too, node_modules pinned: continue runs the delta that was installed", async () => {
    // A project with delta installed in it, as npm install delta-engine leaves it: the package and the packages it loads at run time.
    const ws = join(root, "project");
    const installed = join(ws, "node_modules", "delta-engine");
    for (const part of ["package.json", "bin", "dist"]) cpSync(join(enginePackage(), part), join(installed, part), { recursive: true });
    for (const folder of engineCodeFolders().slice(1)) cpSync(folder, join(ws, "node_modules", basename(folder)), { recursive: true });
    const bin = join(installed, "bin", "delta.js");
    const bundle = readFileSync(join(installed, "dist", "delta.cjs"));
    const script = [
      "echo 'process.exit(7)' >> node_modules/delta-engine/dist/delta.cjs 2>/dev/null && echo wrote-engine || echo denied-engine",
      "echo x >> node_modules/ajv/package.json 2>/dev/null && echo wrote-ajv || echo denied-ajv",
      "mv node_modules moved 2>/dev/null && echo moved-modules || echo pinned-modules",
      "touch node_modules/beside && echo wrote-beside",
    ].join("; ");
    const server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script } }]), reply.text("done"), reply.text("again")]);
    try {
      const agent = writeAgent(join(root, "engine-inside"), { agentYaml: `name: walls\nllm:\n  model: mock-model\nsandbox: ${BOX}\ntools:\n${RUN_TOOL}` });
      const call = await deltaWith(["run", "--agent", agent, "-w", ws, "-m", "go", "--run-id", "r1", "--format", "json"], modelEnv(server.baseUrl), {}, bin);
      expect(call.exitCode, call.stderr).toBe(0);
      const observation = actionResults(ws, "r1")[0]?.observation_content ?? "";
      for (const word of ["denied-engine", "denied-ajv", "pinned-modules", "wrote-beside"]) expect(observation).toContain(word);
      expect(readFileSync(join(installed, "dist", "delta.cjs")).equals(bundle)).toBe(true);
      const again = await deltaWith(["continue", "-w", ws, "--run-id", "r1", "-m", "again", "--format", "json"], modelEnv(server.baseUrl), {}, bin);
      expect(again.exitCode, again.stderr).toBe(0);
      // The engine's clone as the workspace itself is refused: no bind could keep its code read-only and the workspace writable.
      const refused = await deltaWith(["run", "--agent", agent, "-w", installed, "-m", "go", "--run-id", "r2", "--format", "json"], modelEnv(server.baseUrl), {}, bin);
      expect(refused.exitCode, refused.stderr).toBe(126);
      expect(JSON.parse(refused.stdout).error.message).toContain("is the engine's own code");
    } finally {
      await server.close();
    }
  });
});
