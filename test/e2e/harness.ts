// What e2e tests share: temp agents on disk, the real `delta` binary, and reading a run's files.
import { execa, type ResultPromise } from "execa";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_CONTEXT_YAML } from "../../src/agent/default-context.js";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { randomHex } from "../../src/random-hex.js";
import { afterAll, beforeAll } from "vitest";
import { startMockLlm, type MockLlm, type MockLlmOptions, type Script } from "../support/mock-llm.js";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const DELTA_BIN = join(REPO, "bin/delta.js");

export interface DeltaResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface DeltaOptions {
  cwd?: string;
  env?: Record<string, string>;
  input?: string;
  timeoutMs?: number;
  /**
   * Most tests continue a run against a fresh mock server (a new port, so a new endpoint): `continue`
   * gets --accept-endpoint unless the test is about the endpoint rule itself and sets this.
   */
  checkEndpoint?: boolean;
}

/** Environment for a run against the mock model: no inherited keys, fast retries. */
export function modelEnv(baseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return { DELTA_API_KEY: "sk-test-secret-key-123", DELTA_BASE_URL: baseUrl, DELTA_RETRY_BASE_MS: "5", ...extra };
}

/** Blanks every variable that could point a run at a real model, so tests never inherit this machine's keys. */
export const NO_MODEL_KEYS = { OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", ANTHROPIC_BASE_URL: "", DELTA_API_KEY: "", DELTA_BASE_URL: "", DELTA_PROVIDER: "" };

/** What a crash looks like on stderr: the engine's internal-error banner or a stack frame. */
export const CRASH_TRACE = /Internal error|\n\s+at .+:\d+:\d+/;

export function spawnDelta(args: string[], options: DeltaOptions = {}): ResultPromise<{ reject: false }> {
  const accept = args[0] === "continue" && !options.checkEndpoint && !args.includes("--accept-endpoint") && !args.includes("--base-url");
  return execa(process.execPath, [DELTA_BIN, ...args, ...(accept ? ["--accept-endpoint"] : [])], {
    cwd: options.cwd ?? REPO,
    env: asTheCommandStartsNode({ ...NO_MODEL_KEYS, ...options.env }),
    extendEnv: true,
    input: options.input,
    stdin: options.input === undefined ? "ignore" : undefined,
    reject: false,
    stripFinalNewline: false,
    timeout: options.timeoutMs ?? 30_000,
  }) as ResultPromise<{ reject: false }>;
}

/**
 * What the `delta` command's launcher (bin/delta.js read by sh) does before it starts Node, which a test skips by
 * starting the node that runs it on the file: NODE_EXTRA_CA_CERTS moved to DELTA_DEFERRED_CA_CERTS unless NODE_OPTIONS
 * chooses a CA store, and malloc held to two arenas unless the environment chooses a number. Otherwise every delta a
 * test starts parses the machine's CA bundle, as no user's does (37 ms of CPU a start with Debian's bundle, on 2
 * cores). test/e2e/deferred-ca.test.ts and test/e2e/malloc-arenas.test.ts start the command itself.
 */
function asTheCommandStartsNode(env: Record<string, string>): Record<string, string | undefined> {
  // A variable the test names (even as undefined, which unsets it) wins over this process's.
  const seen = (name: string): string | undefined => (name in env ? env[name] : process.env[name]);
  const arenas = seen("MALLOC_ARENA_MAX") !== undefined || (seen("GLIBC_TUNABLES") ?? "").includes("arena_max") ? {} : { MALLOC_ARENA_MAX: "2", DELTA_LAUNCHER_MALLOC_ARENAS: "2" };
  const extra = env.NODE_EXTRA_CA_CERTS ?? process.env.NODE_EXTRA_CA_CERTS;
  if (!extra || (env.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? "").includes("-ca")) return { ...env, ...arenas };
  return { ...env, ...arenas, NODE_EXTRA_CA_CERTS: undefined, DELTA_DEFERRED_CA_CERTS: extra };
}

export async function delta(args: string[], options: DeltaOptions = {}): Promise<DeltaResult> {
  const result = await spawnDelta(args, options);
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

export function tempDir(prefix = "delta-e2e-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * A copy of the built package at `dir` (bin/, dist/ less its code cache and source maps, package.json), for a test
 * whose delta must not share the clone's: another user's, which may not reach a clone in a private folder, or one
 * whose code cache is the test's own. Returns the copy's bin/delta.js.
 */
export function copyOfDelta(dir: string): string {
  for (const part of ["bin", "dist", "package.json"]) {
    cpSync(join(REPO, part), join(dir, part), { recursive: true, filter: (source) => !source.includes(join("dist", ".cache")) && !source.endsWith(".map") });
  }
  return join(dir, "bin", "delta.js");
}

export interface E2eSetUp {
  /** A private folder for the file's tests: made before its first test, removed with all it holds after its last. */
  root: string;
  /** Starts a scripted model on 127.0.0.1, closed after the file's last test. */
  serve(script?: Script, options?: MockLlmOptions): Promise<MockLlm>;
}

/**
 * The set-up every e2e file shares, called once at its top: the folder its agents and workspaces live in and the model
 * servers its tests start, both gone when the file is done (nothing is made when every test is filtered out).
 */
export function setUpE2e(prefix = "delta-e2e-"): E2eSetUp {
  const root = join(tmpdir(), `${prefix}${randomHex(6)}`);
  const servers: MockLlm[] = [];
  beforeAll(() => {
    mkdirSync(root, { mode: 0o700 });
  });
  // Removing what a file left (two global npm installs, a long run's journals) can take a while on a busy machine.
  afterAll(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
    removeDir(root);
  }, 120_000);
  return {
    root,
    serve: async (script, options) => {
      const server = await startMockLlm(script, options);
      servers.push(server);
      return server;
    },
  };
}

export interface AgentSpec {
  agentYaml?: string;
  tools?: string;
  contextYaml?: string;
  hooksYaml?: string;
  systemPrompt?: string;
  files?: Record<string, string>;
}

/** The default context.yaml of `delta init` and of the design (spec 2.4.4). */
export const DEFAULT_CONTEXT = DEFAULT_CONTEXT_YAML;

/** Writes an agent package into `<root>/<name>` and returns its path. */
export function writeAgent(root: string, spec: AgentSpec = {}, name = "agent"): string {
  const home = join(root, name);
  mkdirSync(home, { recursive: true });
  const agentYaml = spec.agentYaml ?? `name: test-agent\nllm:\n  model: mock-model\n${spec.tools ?? "tools:\n  - name: echo\n    exec: \"echo \${text}\"\n"}`;
  writeFileSync(join(home, "agent.yaml"), agentYaml);
  writeFileSync(join(home, "system_prompt.md"), spec.systemPrompt ?? "You are a test agent.");
  writeFileSync(join(home, "context.yaml"), spec.contextYaml ?? DEFAULT_CONTEXT);
  if (spec.hooksYaml) writeFileSync(join(home, "hooks.yaml"), spec.hooksYaml);
  for (const [file, content] of Object.entries(spec.files ?? {})) {
    mkdirSync(dirname(join(home, file)), { recursive: true });
    writeFileSync(join(home, file), content);
  }
  return home;
}

export function runDir(workDir: string, runId: string): string {
  return join(workDir, ".delta", runId);
}

export function readEvents(workDir: string, runId: string): JournalEvent[] {
  const text = readFileSync(join(runDir(workDir, runId), "journal.jsonl"), "utf8");
  return text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as JournalEvent);
}

/** The run's ACTION_RESULT events, in journal order. */
export function actionResults(workDir: string, runId: string): EventOf<"ACTION_RESULT">[] {
  return readEvents(workDir, runId).filter((event): event is EventOf<"ACTION_RESULT"> => event.type === "ACTION_RESULT");
}

export function readMetadataFile(workDir: string, runId: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(runDir(workDir, runId), "metadata.json"), "utf8")) as Record<string, unknown>;
}

/** The io records of one kind (one .json file each); io/invocations/request-parts.jsonl, the parts the records point at, is not one. */
export function listIo(workDir: string, runId: string, kind: "invocations" | "tool_executions" | "hooks"): string[] {
  return readdirSync(join(runDir(workDir, runId), "io", kind)).filter((name) => name.endsWith(".json")).sort();
}

export function eventTypes(events: JournalEvent[]): string[] {
  return events.map((event) => event.type);
}

/** Polls until check() holds; for waiting on files a spawned run writes, never for timing. */
export async function waitFor(check: () => boolean, timeoutMs = 15_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Waits until the run's owner record names the process group of the tool it runs, and returns that group: from then on
 * a kill -9 of the engine leaves a group that `continue` knows to stop. A tool can write its own pid before the engine
 * has noted its group.
 */
export async function toolGroupNoted(workDir: string, runId: string, timeoutMs = 30_000): Promise<number> {
  // Imported here, not at the top: the lease modules cost every e2e file that imports this one a few hundred ms of CPU.
  const [{ runPaths }, { parseRunId }, { readCurrentOwner }] = await Promise.all([import("../../src/store/run-dir.js"), import("../../src/store/run-id.js"), import("../../src/store/lease/take-run.js")]);
  let pgid: number | undefined;
  await waitFor(() => (pgid = readCurrentOwner(runPaths(workDir, parseRunId(runId)))?.record?.tool_group?.pgid) !== undefined, timeoutMs, `the tool group of run ${runId} in its owner record`);
  return pgid!;
}

/** True once the run's journal holds an event of this type (a torn last line is ignored). */
export function journalHas(workDir: string, runId: string, type: JournalEvent["type"]): boolean {
  try {
    const lines = readFileSync(join(runDir(workDir, runId), "journal.jsonl"), "utf8").split("\n");
    return lines.some((line) => line.includes(`"type":"${type}"`));
  } catch {
    return false;
  }
}

/** Every file below `dir`, at any depth. */
export function collectFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? collectFiles(join(dir, entry.name)) : [join(dir, entry.name)]));
}
