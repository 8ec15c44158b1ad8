// End to end: what a tool plants as a context file (`${CWD}/DELTA.md`) — a link to a private key, to the agent's .env, to /proc/self/environ; a FIFO, /dev/zero, a 300 MB file — is refused on the next context build, naming the file and the fix; nothing of it reaches the model or io/.
import { execa } from "execa";
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { pauseGate } from "../support/pause-points.js";
import { collectFiles, DELTA_BIN, delta, modelEnv, NO_MODEL_KEYS, readEvents, runDir, setUpE2e, spawnDelta, writeAgent } from "./harness.js";

const CONTEXT = "sources:\n  - type: file\n    path: '${AGENT_HOME}/system_prompt.md'\n  - type: file\n    id: guide\n    path: '${CWD}/DELTA.md'\n    on_missing: skip\n  - type: journal\n";
const TOOLS = 'tools:\n  - name: run\n    exec: "sh -c ${script}"\n';
const KEY_BYTES = "-----BEGIN OPENSSH PRIVATE KEY----- key-bytes-5150";
const AGENT_DOTENV_SECRET = "agent-dotenv-secret-6620";
const ENVIRON_SECRET = "environ-secret-7731";

/** The engine's data segment is capped at this (prlimit): a /dev/zero read whole, or a 300 MB file held as text, would crash it. */
const MEMORY_CAP_BYTES = 512 << 20;

const { root, serve } = setUpE2e("delta-context-files-");
const home = join(root, "home");
beforeAll(() => {
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), `${KEY_BYTES}\n`);
});

interface Planted {
  exitCode: number;
  /** The RunResult's error message. */
  message: string;
  ws: string;
  server: MockLlm;
}

let cases = 0;

/** A run whose model has a tool plant DELTA.md with `script` (in the workspace), then asks for another turn. */
async function plantAndContinue(script: string, workspaceDotenv?: string): Promise<Planted> {
  const server = await serve([reply.toolCalls([{ name: "run", arguments: { script } }]), reply.text("done")]);
  const dir = join(root, `case-${++cases}`);
  const agent = writeAgent(dir, { agentYaml: `name: planted\nllm:\n  model: mock-model\n${TOOLS}`, contextYaml: CONTEXT, files: { ".env": `PLANTED_TOKEN=${AGENT_DOTENV_SECRET}\n` } });
  const ws = join(dir, "ws");
  mkdirSync(ws);
  if (workspaceDotenv !== undefined) writeFileSync(join(ws, ".env"), workspaceDotenv);
  const result = await execa("prlimit", [`--data=${MEMORY_CAP_BYTES}`, "--", process.execPath, DELTA_BIN, "run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go", "--format", "json"], {
    env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl, { HOME: home, DELTA_TEST_MARKER: ENVIRON_SECRET }) },
    stdin: "ignore",
    reject: false,
    timeout: 60_000,
  });
  expect(result.timedOut, String(result.stderr)).toBe(false);
  const outcome = JSON.parse(String(result.stdout)) as { error: { type: string; message: string } };
  expect(outcome.error.type).toBe("FILE_REFUSED");
  return { exitCode: result.exitCode ?? -1, message: outcome.error.message, ws, server };
}

/** The run failed FILE_REFUSED at its second context build, naming DELTA.md; the model was asked once, and nothing of `secret` was sent or written. */
function expectRefused(planted: Planted, reason: RegExp, secret?: string): void {
  expect(planted.exitCode, planted.message).toBe(1);
  expect(planted.message).toContain(`context.yaml source 'guide' (sources[1]): ${join(planted.ws, "DELTA.md")} `);
  expect(planted.message).toMatch(reason);
  const error = readEvents(planted.ws, "r1").find((event) => event.type === "ERROR");
  expect(error?.type === "ERROR" && error.error_type).toBe("FILE_REFUSED");
  expect(planted.server.requests).toHaveLength(1);
  if (secret === undefined) return;
  expect(JSON.stringify(planted.server.requests.map((request) => request.body))).not.toContain(secret);
  for (const file of collectFiles(runDir(planted.ws, "r1"))) expect(readFileSync(file, "utf8"), file).not.toContain(secret);
}

describe.concurrent("a context file a tool planted", { timeout: 90_000 }, () => {
  it("a link to a private key outside the workspace is refused, and the key reaches neither the model nor io/", async () => {
    const planted = await plantAndContinue(`ln -sf "${join(home, ".ssh", "id_rsa")}" DELTA.md`);
    expectRefused(planted, /leads through a symbolic link to .*\/home\/\.ssh\/id_rsa, outside .* where it is named .*put the file itself there, or name its real path/, "key-bytes-5150");
  });

  it("a link to the agent's .env or to /proc/self/environ is refused; neither secret reaches the model", async () => {
    const dotenv = await plantAndContinue('ln -sf "$DELTA_AGENT_HOME/.env" DELTA.md');
    expectRefused(dotenv, /leads through a symbolic link to .*\/\.env, outside/, AGENT_DOTENV_SECRET);
    const environ = await plantAndContinue("ln -sf /proc/self/environ DELTA.md");
    expectRefused(environ, /leads through a symbolic link to \/proc\/\d+\/environ, outside/, ENVIRON_SECRET);
  });

  it("a link to the workspace's own .env, which boxes are shown empty, is refused", async () => {
    const planted = await plantAndContinue("ln -sf .env DELTA.md", "WS_TOKEN=ws-dotenv-secret-8840\n");
    expectRefused(planted, /which every box is shown empty/, "ws-dotenv-secret-8840");
  });

  it("a FIFO ends the run at once instead of blocking the engine in a read", async () => {
    expectRefused(await plantAndContinue("mkfifo DELTA.md"), /is a FIFO \(named pipe\), which would wait for a writer, not a regular file/);
  });

  it("a link to /dev/zero and a 300 MB file are refused without being read, within the memory cap", async () => {
    expectRefused(await plantAndContinue("ln -sf /dev/zero DELTA.md"), /leads through a symbolic link to \/dev\/zero, outside/);
    expectRefused(await plantAndContinue("truncate -s 300M DELTA.md"), /is larger than 8\.0 MiB \(8388608 bytes\), the bound of a context file; it is refused: make it smaller/);
  });

  it("a link planted before the run is refused before anything is created (126)", async () => {
    const dir = join(root, "before");
    const agent = writeAgent(dir, { contextYaml: CONTEXT.replace("    on_missing: skip\n", "") });
    const ws = join(dir, "ws");
    mkdirSync(ws);
    symlinkSync(join(home, ".ssh", "id_rsa"), join(ws, "DELTA.md"));
    const result = await delta(["run", "--agent", agent, "-w", ws, "-m", "go", "--format", "json"], { env: modelEnv("http://127.0.0.1:9/v1", { HOME: home }) });
    expect(result.exitCode, result.stderr).toBe(126);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "REFUSED", error: { type: "FILE_REFUSED" } });
    expect(result.stderr).toContain(`${join(ws, "DELTA.md")} leads through a symbolic link to ${join(home, ".ssh", "id_rsa")}`);
  });
});

describe("a folder swapped for a link while the engine opens a file in it", () => {
  it("is caught on the opened descriptor: the file outside is refused, not read", async () => {
    const server = await serve([reply.text("done")]);
    const dir = join(root, "swap");
    const agent = writeAgent(dir, { contextYaml: CONTEXT.replace("${CWD}/DELTA.md", "${CWD}/docs/DELTA.md") });
    const ws = join(dir, "ws");
    mkdirSync(join(ws, "docs"), { recursive: true });
    writeFileSync(join(ws, "docs", "DELTA.md"), "the guide\n");
    mkdirSync(join(dir, "elsewhere"));
    writeFileSync(join(dir, "elsewhere", "DELTA.md"), `${KEY_BYTES}\n`);
    const gate = pauseGate("folder-file-resolved:DELTA.md", root);
    try {
      const running = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go", "--format", "json"], { env: modelEnv(server.baseUrl, { HOME: home, ...gate.env }), timeoutMs: 60_000 });
      await gate.reached();
      // Checked and resolved inside the workspace; now the folder becomes a link out, before the open.
      renameSync(join(ws, "docs"), join(ws, "docs-moved"));
      symlinkSync(join(dir, "elsewhere"), join(ws, "docs"));
      gate.open();
      const result = await running;
      expect(result.exitCode, String(result.stderr)).toBe(1);
      expect(JSON.parse(String(result.stdout)).error.message).toContain(`${join(ws, "docs", "DELTA.md")} leads through a symbolic link to ${join(dir, "elsewhere", "DELTA.md")}, outside ${ws}`);
      expect(server.requests).toHaveLength(0);
    } finally {
      gate.open();
    }
  }, 90_000);
});
