// The sandbox on a real machine: each thing a boxed tool cannot do, beside the same call succeeding once the policy allows it.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionResults, delta, type DeltaResult, listIo, modelEnv, readEvents, removeDir, tempDir, writeAgent } from "../e2e/harness.js";
import { filesystemServer, stdioServerYaml } from "../support/mcp-servers.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { requireBinary } from "../support/system-packages.js";

let root: string;
let home: string;
beforeAll(() => {
  requireBinary("bwrap");
  root = tempDir("delta-sandbox-");
  // A home of our own, with the secrets a box must hide.
  home = join(root, "home");
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE-KEY-BYTES\n");
});
afterAll(() => removeDir(root));

const RUN_TOOL = `  - name: run
    exec: "sh -c \${script}"
`;

interface Call {
  result: DeltaResult;
  ws: string;
  agent: string;
  status: string;
  observation: string;
}

let cases = 0;

/** One run whose model calls `run` with `script` once; `sandbox` is agent.yaml's sandbox: block (YAML flow), `extra` more of agent.yaml. */
async function runScript(script: string, sandbox: string | null, options: { extra?: string; tool?: string; hooks?: string; args?: string[]; env?: Record<string, string>; files?: Record<string, string>; ws?: string } = {}): Promise<Call> {
  const server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script } }]), reply.text("done")]);
  try {
    const dir = join(root, `case-${++cases}`);
    mkdirSync(dir);
    const agent = writeAgent(dir, {
      agentYaml: `name: boxed\nllm:\n  model: mock-model\n${sandbox === null ? "" : `sandbox: ${sandbox}\n`}${options.extra ?? ""}tools:\n${RUN_TOOL}${options.tool ?? ""}`,
      files: options.files,
      ...(options.hooks === undefined ? {} : { hooksYaml: options.hooks }),
    });
    const ws = options.ws ?? join(agent, "W001");
    mkdirSync(ws, { recursive: true });
    const result = await delta(["run", "--agent", agent, "-w", ws, "-m", "go", "--run-id", "r1", "--format", "json", ...(options.args ?? [])], {
      env: modelEnv(server.baseUrl, { HOME: home, ...options.env }),
      timeoutMs: 60_000,
    });
    const results = existsSync(join(ws, ".delta", "r1")) ? actionResults(ws, "r1") : [];
    return { result, ws, agent, status: results[0]?.status ?? "none", observation: results[0]?.observation_content ?? "" };
  } finally {
    await server.close();
  }
}

const BOX = "{mode: workspace-write}";

describe("the file system under workspace-write", () => {
  it("writes in the workspace, not outside it; a path in write: is writable", async () => {
    const outside = join(root, "outside");
    mkdirSync(outside);
    const inside = await runScript("echo in > inside.txt", BOX);
    expect(inside.status).toBe("SUCCESS");
    expect(readFileSync(join(inside.ws, "inside.txt"), "utf8")).toBe("in\n");

    const denied = await runScript(`echo out > ${outside}/denied.txt`, BOX);
    expect(denied.status).toBe("FAILED");
    // The host's /tmp, where this folder lives, is not the box's: the box sees neither it nor its files.
    expect(denied.observation).toMatch(/Read-only file system|Directory nonexistent/);
    expect(existsSync(join(outside, "denied.txt"))).toBe(false);

    const granted = await runScript(`echo out > ${outside}/granted.txt`, `{mode: workspace-write, write: [${outside}]}`);
    expect(granted.status).toBe("SUCCESS");
    expect(readFileSync(join(outside, "granted.txt"), "utf8")).toBe("out\n");
  });

  it("keeps .delta/, .env (absent before), .git, the agent folder and another workspace read-only; mode off writes them all", async () => {
    const script = [
      "touch .delta/planted",
      "echo STOLEN=1 > .env",
      "mkdir -p .git/hooks",
      'touch "$DELTA_AGENT_HOME/planted"',
      'touch "$DELTA_AGENT_HOME/W002/planted"',
    ].map((line) => `(${line}) 2>/dev/null && echo "ok: ${line.replace(/"/g, "")}" || echo "denied: ${line.replace(/"/g, "")}"`).join("; ");
    const boxed = await runScript(script, BOX, { files: { "W002/keep.txt": "other workspace\n" } });
    expect(boxed.status).toBe("SUCCESS");
    expect(boxed.observation.match(/^denied: /gm)).toHaveLength(5);
    expect(existsSync(join(boxed.ws, ".delta", "planted"))).toBe(false);
    expect(readFileSync(join(boxed.ws, ".env"), "utf8")).toBe(""); // the empty placeholder the box leaves
    expect(existsSync(join(boxed.ws, ".git", "hooks"))).toBe(false);
    expect(existsSync(join(boxed.agent, "planted"))).toBe(false);
    expect(existsSync(join(boxed.agent, "W002", "planted"))).toBe(false);

    const open = await runScript(script, "{mode: off}", { files: { "W002/keep.txt": "other workspace\n" } });
    expect(open.observation.match(/^ok: /gm)).toHaveLength(5);
    expect(readFileSync(join(open.ws, ".env"), "utf8")).toBe("STOLEN=1\n");
    expect(existsSync(join(open.agent, "W002", "planted"))).toBe(true);
  });
});

describe("a box that cannot be made", () => {
  it("becomes the call's ERROR observation naming the setting, and the run goes on", async () => {
    const call = await runScript("echo ran", "{mode: workspace-write, write: [/etc/hostname/sub]}");
    expect(call.result.exitCode, call.result.stderr).toBe(0);
    expect(call.status).toBe("ERROR");
    expect(call.observation).toMatch(/^\[sandbox\] the box of tool 'run' could not be made \(.*\/etc\/hostname\/sub.*\); fix its sandbox: in agent.yaml$/);
  });
});

describe("what a box hides", () => {
  it("shows ~/.ssh and the engine's .env files empty, and leaves AWS_SECRET_ACCESS_KEY out of the environment", async () => {
    const script = 'cat "$HOME/.ssh/id_ed25519"; cat "$DELTA_AGENT_HOME/.env"; echo "aws=[$AWS_SECRET_ACCESS_KEY]"';
    const files = { ".env": "AGENT_DOTENV_SECRET=dotenv-value-42\n" };
    const env = { AWS_SECRET_ACCESS_KEY: "aws-secret-value-42" };
    const boxed = await runScript(script, BOX, { files, env });
    expect(boxed.observation).not.toContain("PRIVATE-KEY-BYTES");
    expect(boxed.observation).not.toContain("dotenv-value-42");
    expect(boxed.observation).toContain("aws=[]");

    const open = await runScript(script, null, { files, env });
    expect(open.observation).toContain("PRIVATE-KEY-BYTES");
    expect(open.observation).toContain("dotenv-value-42");
    expect(open.observation).toContain("aws=[aws-secret-value-42]");
  });
});

describe("the network", () => {
  let allowed: Server;
  let other: Server;
  let allowedPort: number;
  let otherPort: number;
  beforeAll(async () => {
    const serve = (name: string): Promise<Server> =>
      new Promise((resolve) => {
        const server = createServer((_req, res) => res.end(`hello from ${name}\n`));
        server.listen(0, "127.0.0.1", () => resolve(server));
      });
    allowed = await serve("allowed");
    other = await serve("other");
    allowedPort = (allowed.address() as AddressInfo).port;
    otherPort = (other.address() as AddressInfo).port;
  });
  afterAll(() => {
    allowed.close();
    other.close();
  });

  it("opens no TCP connection with network off, and does with network on", async () => {
    const script = `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${allowedPort}/`;
    const boxed = await runScript(script, BOX);
    expect(boxed.status).toBe("FAILED");
    expect(boxed.observation).not.toContain("hello from allowed");
    const open = await runScript(script, "{mode: workspace-write, network: on}");
    expect(open.status).toBe("SUCCESS");
    expect(open.observation).toContain("hello from allowed");
  });

  it("reaches a listed host through the proxy, is refused another, and records the refusal", async () => {
    const script = `curl -sS --max-time 10 http://localhost:${allowedPort}/; echo; curl -sS --max-time 10 http://127.0.0.1:${otherPort}/; echo "other exit $?"`;
    const call = await runScript(script, `{mode: workspace-write, network: ["localhost:${allowedPort}"]}`);
    expect(call.observation).toContain("hello from allowed");
    expect(call.observation).not.toContain("hello from other");
    expect(call.observation).toContain(`[sandbox] the network proxy refused 127.0.0.1:${otherPort}`);
    const [record] = listIo(call.ws, "r1", "tool_executions");
    const io = JSON.parse(readFileSync(join(call.ws, ".delta", "r1", "io", "tool_executions", record!), "utf8")) as { sandbox: { refused_connections: string[] } };
    expect(io.sandbox.refused_connections).toEqual([`127.0.0.1:${otherPort}`]);
  });
});

describe("MCP stdio servers", () => {
  it("box a server as a tool: it cannot write in the agent's folder until write: allows it", async () => {
    const run = async (sandbox: string, name: string): Promise<{ status: string; observation: string; agent: string }> => {
      const agent = join(root, `mcp-${name}`, "agent");
      const server = await startMockLlm([reply.toolCalls([{ name: "fs__write_file", arguments: { path: join(agent, name), content: "x" } }]), reply.text("done")]);
      try {
        writeAgent(join(root, `mcp-${name}`), { agentYaml: `name: boxed-mcp\nllm:\n  model: mock-model\nsandbox: ${sandbox}\nmcp_servers:\n${stdioServerYaml("fs", filesystemServer(agent))}` });
        mkdirSync(join(agent, "W001"));
        const result = await delta(["run", "--agent", agent, "-w", join(agent, "W001"), "-m", "go", "--run-id", "m1"], { env: modelEnv(server.baseUrl, { HOME: home }), timeoutMs: 60_000 });
        expect(result.exitCode, result.stderr).toBe(0);
        const [result0] = actionResults(join(agent, "W001"), "m1");
        return { status: result0!.status, observation: result0!.observation_content, agent };
      } finally {
        await server.close();
      }
    };
    const denied = await run(BOX, "denied.txt");
    expect(denied.status).toBe("ERROR");
    expect(denied.observation).toMatch(/EROFS|read-only/i);
    expect(existsSync(join(denied.agent, "denied.txt"))).toBe(false);
    const granted = await run("{mode: workspace-write, write: ['${AGENT_HOME}']}", "granted.txt");
    expect(granted.status).toBe("SUCCESS");
    expect(readFileSync(join(granted.agent, "granted.txt"), "utf8")).toBe("x");
  });
});

describe("hooks", () => {
  it("run unboxed beside boxed tools, and in the agent's box with sandbox.hooks: true", async () => {
    const hooks = JSON.stringify({ post_tool_execution: { command: ["sh", "-c", "touch ${AGENT_HOME}/hooked"] } });
    const unboxed = await runScript("true", BOX, { hooks });
    expect(existsSync(join(unboxed.agent, "hooked"))).toBe(true);
    const boxed = await runScript("true", "{mode: workspace-write, hooks: true}", { hooks });
    expect(boxed.status).toBe("SUCCESS");
    expect(existsSync(join(boxed.agent, "hooked"))).toBe(false);
  });
});

describe("a killed boxed tool", () => {
  it("leaves no process behind, even one that left its process group", async () => {
    const marker = `${300 + (Date.now() % 500)}.25`;
    const call = await runScript(`setsid sleep ${marker} & sleep ${marker}`, BOX, { tool: "    timeout_ms: 1500\n" });
    expect(call.status).toBe("ERROR");
    expect(call.observation).toMatch(/timed out/i);
    expect(await noProcessSoon(`sleep\0${marker}`)).toBe(true);
  });
});

/** True once no process's command line contains `needle` (NUL-separated argv), within five seconds. */
async function noProcessSoon(needle: string): Promise<boolean> {
  for (let tries = 0; tries < 50; tries++) {
    const alive = readdirSync("/proc").filter((entry) => /^\d+$/.test(entry)).some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(needle);
      } catch {
        return false;
      }
    });
    if (!alive) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

describe("journal", () => {
  it("records the policy in ENGINE_START, and none for an agent without one; show says which", async () => {
    const boxed = await runScript("true", BOX);
    const start = readEvents(boxed.ws, "r1").find((event) => event.type === "ENGINE_START");
    expect(start?.type === "ENGINE_START" && start.config.sandbox).toEqual({ agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {} });
    const open = await runScript("true", null);
    const plain = readEvents(open.ws, "r1").find((event) => event.type === "ENGINE_START");
    expect(plain?.type === "ENGINE_START" && plain.config.sandbox).toBe("none");
    const shown = await delta(["show", "r1", "-w", boxed.ws]);
    expect(shown.stdout).toContain("sandbox workspace-write, no network");
  });

  it("keeps the journaled policy on continue even when agent.yaml dropped it; continue --sandbox changes it from then on, journaled", async () => {
    const script = "touch .delta/planted 2>/dev/null && echo planted || echo denied";
    const first = await runScript(script, BOX);
    expect(first.observation).toContain("denied");
    // The author removes the sandbox; the run keeps the box it started with.
    writeFileSync(join(first.agent, "agent.yaml"), `name: boxed\nllm:\n  model: mock-model\ntools:\n${RUN_TOOL}`);
    const again = async (args: string[]): Promise<string> => {
      const server = await startMockLlm([reply.toolCalls([{ name: "run", arguments: { script } }]), reply.text("done")]);
      try {
        const result = await delta(["continue", "-w", first.ws, "--run-id", "r1", "-m", "again", ...args], { env: modelEnv(server.baseUrl, { HOME: home }), timeoutMs: 60_000 });
        expect(result.exitCode, result.stderr).toBe(0);
        return actionResults(first.ws, "r1").at(-1)!.observation_content;
      } finally {
        await server.close();
      }
    };
    expect(await again([])).toContain("denied");
    expect(await again(["--sandbox", "off"])).toContain("planted");
    // The change holds for the continues that follow.
    expect(await again([])).toContain("planted");
    const starts = readEvents(first.ws, "r1").flatMap((event) => (event.type === "ENGINE_START" ? [event.config.sandbox] : []));
    expect(starts).toEqual([
      { agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {} },
      { agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {} },
      { agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {}, override: "off" },
      { agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {}, override: "off" },
    ]);
  });
});
