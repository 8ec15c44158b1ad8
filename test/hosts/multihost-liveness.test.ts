// Liveness across hosts: a run held on one simulated machine, judged from another (paused, clock ahead, same hostname, over sshfs, dead) — never two writers.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { quote } from "shell-quote";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";

import { startHosts, type Host, type Hosts } from "../support/hosts.js";
import { messagesOf, reply, startMockLlm, taskOf, type MockLlm } from "../support/mock-llm.js";
import { multihostUnsupportedReason } from "../support/multihost-preflight.js";
import { delta, DELTA_BIN, modelEnv, removeDir, runDir, tempDir, waitFor, writeAgent } from "../e2e/harness.js";

// `hold <tag>` marks that it ran, then waits for release-<tag>: a holder that is busy in a tool for as long as a test needs.
const TOOLS = `tools:
  - name: hold
    shell: "mkdir -p markers && echo ran >> markers/\${tag} && while [ ! -e release-\${tag} ]; do sleep 0.05; done && echo held \${tag}"
`;
/** Beats of a holder that must be seen alive: 5 of them (the stale period) are 2.5 s, room for a busy machine to miss a few. */
const LIVE_BEAT_MS = "500";
/** Beats of a holder that will be paused or killed: its takers watch 1.5 s. */
const SHORT_BEAT_MS = "300";
/** Booting hosts (keys, sshd, a probe over ssh each) takes seconds, more on a busy machine. */
const HOSTS_START_MS = 120_000;

let root: string;
let server: MockLlm;
let agent: string;
let unsupported: string | null = null;
const started: Hosts[] = [];

beforeAll(async () => {
  unsupported = await multihostUnsupportedReason(["hosts", "faketime", "sshfs"]);
  root = tempDir("delta-multihost-liveness-");
  agent = writeAgent(root, { tools: TOOLS });
  server = await startMockLlm((request) => {
    const last = messagesOf(request).at(-1);
    if (last?.role === "tool") return reply.text(`done after ${last.content}`);
    return reply.toolCalls([{ name: "hold", arguments: { tag: taskOf(request).split(" ")[1] ?? "x" } }]);
  });
});
// Where a package, namespaces or FUSE are missing, every test fails with the reason; none is skipped.
beforeEach(() => {
  if (unsupported) throw new Error(unsupported);
});
afterAll(async () => {
  await Promise.all(started.map((hosts) => hosts.close()));
  await server?.close();
  removeDir(root);
});

/** The hosts, as many as `options.count` asks for. */
async function hostsFor<T extends Host[]>(options: Parameters<typeof startHosts>[0]): Promise<T> {
  const hosts = await startHosts(options);
  started.push(hosts);
  return hosts.hosts as T;
}

/** The shell command that runs the built delta on a host, against the mock model. */
function deltaOn(args: string[], beatMs: string): string {
  const env = Object.entries({ ...modelEnv(server.baseUrl), DELTA_HEARTBEAT_MS: beatMs }).map(([name, value]) => `${name}=${value}`);
  return `exec ${quote(["env", ...env, process.execPath, DELTA_BIN, ...args])}`;
}

/** Starts `hold <tag>` as run `tag` on `host`, and resolves once its tool runs: the run is held there, mid-iteration. */
async function holdOn(host: Host, ws: string, tag: string, beatMs: string): Promise<{ done: ReturnType<Host["spawn"]> }> {
  mkdirSync(ws, { recursive: true });
  const holder = host.spawn(deltaOn(["run", "--agent", agent, "-w", ws, "--run-id", tag, "-m", `hold ${tag}`, "--format", "json"], beatMs), { timeoutMs: 120_000 });
  await waitFor(() => markerRuns(ws, tag) === 1, 30_000, `run ${tag} holding on ${host.name}`);
  // Wrapped: an async function returning the process itself would wait for it to end.
  return { done: holder };
}

async function continueOn(host: Host, ws: string, runId: string) {
  const result = await host.exec(deltaOn(["continue", "--run-id", runId, "-w", ws, "--format", "json"], SHORT_BEAT_MS), { timeoutMs: 60_000 });
  return { ...result, json: JSON.parse(result.stdout || "null") as { status: string; error?: { type: string; message: string } } | null };
}

/** The test-side pid of the engine running `runId` on `host`. */
function enginePid(host: Host, runId: string): number {
  const pids = host.processes().filter((pid) => cmdline(pid).includes(DELTA_BIN) && cmdline(pid).includes(`--run-id ${runId} `));
  expect(pids, `delta for ${runId} on ${host.name}`).toHaveLength(1);
  return pids[0]!;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "";
  }
}

function markerRuns(ws: string, tag: string): number {
  const file = join(ws, "markers", tag);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

const ofType = <T extends JournalEvent["type"]>(events: JournalEvent[], type: T): EventOf<T>[] => events.filter((event): event is EventOf<T> => event.type === type);

/** One writer, as the journal shows it: every line whole, each call answered once and in order, the tool run once, one end. */
function expectOneWriter(ws: string, runId: string): JournalEvent[] {
  const warnings: string[] = [];
  const events = readJournal(join(runDir(ws, runId), "journal.jsonl"), { warn: (line) => warnings.push(line) });
  expect(warnings).toEqual([]);
  expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
  const results = ofType(events, "ACTION_RESULT");
  expect(ofType(events, "ACTION_REQUEST").map((request) => request.action_id)).toEqual(results.map((result) => result.action_id));
  expect(markerRuns(ws, runId)).toBe(1);
  expect(ofType(events, "ENGINE_END").filter((end) => end.status === "COMPLETED")).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
  return events;
}

/**
 * A live holder on `holderHost`; `continue` from `taker` watches its heartbeat and is refused (126) with nothing
 * written; then the holder finishes alone.
 */
async function expectRefusedWhileAlive(holderHost: Host, taker: Host, ws: string, runId: string, takerWs = ws): Promise<void> {
  const { done: holder } = await holdOn(holderHost, ws, runId, LIVE_BEAT_MS);
  const journal = readFileSync(join(runDir(ws, runId), "journal.jsonl"), "utf8");
  const refused = await continueOn(taker, takerWs, runId);
  expect(refused.exitCode, refused.stderr).toBe(126);
  expect(refused.stderr).toMatch(/watching its heartbeat for 2\.5 s/);
  expect(refused.json?.error).toMatchObject({ type: "RUN_REFUSED", message: expect.stringMatching(/is alive \(its heartbeat went from \d+ to \d+ in 2\.5 s\)/) });
  expect(readFileSync(join(runDir(ws, runId), "journal.jsonl"), "utf8")).toBe(journal);

  writeFileSync(join(ws, `release-${runId}`), "");
  const finished = await holder;
  expect(finished.exitCode, String(finished.stderr)).toBe(0);
  const events = expectOneWriter(ws, runId);
  expect(ofType(events, "ENGINE_START")).toHaveLength(1);
  expect(ofType(events, "ERROR")).toEqual([]);
}

describe("a run held on another host", { timeout: 120_000 }, () => {
  // hostC's sessions run with a clock 15 s ahead (libfaketime).
  let hostA: Host, hostB: Host, hostC: Host;
  beforeAll(async () => {
    if (!unsupported) [hostA, hostB, hostC] = await hostsFor<[Host, Host, Host]>({ count: 3, clockOffsetSeconds: [0, 0, 15] });
  }, HOSTS_START_MS);

  it("is not taken from a live holder by a host with another hostname, nor from this machine", async () => {
    const ws = join(root, "other-name");
    await expectRefusedWhileAlive(hostA, hostB, ws, "other-name");
    // The test's own machine sees the record's pid namespace differ from its own: it watches too, and is refused.
    const { done: holder } = await holdOn(hostA, ws, "other-name-2", LIVE_BEAT_MS);
    const here = await delta(["continue", "--run-id", "other-name-2", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(here.exitCode, here.stderr).toBe(126);
    expect(here.stderr).toMatch(/held by process \d+ on host 'hostA' \(machine [0-9a-f]{8}, boot [0-9a-f]{8}\): watching its heartbeat/);
    writeFileSync(join(ws, "release-other-name-2"), "");
    expect((await holder).exitCode).toBe(0);
    expectOneWriter(ws, "other-name-2");
  });

  it("is not taken from a live holder by a host whose clock is 15 s ahead", async () => {
    expect((await hostC.exec("date +%s")).stdout.trim()).toMatch(/^\d+$/);
    expect(Number((await hostC.exec("date +%s")).stdout) - Math.floor(Date.now() / 1000)).toBeGreaterThanOrEqual(14);
    await expectRefusedWhileAlive(hostA, hostC, join(root, "skewed"), "skewed");
  });

  it("is not taken from a live holder through an sshfs mount that caches attributes; once the holder is killed, it is taken over through it", async () => {
    const ws = join(root, "over-sshfs");
    const mountPoint = join(root, "over-sshfs-on-B");
    mkdirSync(ws, { recursive: true });
    mkdirSync(mountPoint);
    await hostB.mount(hostA, ws, mountPoint);
    await expectRefusedWhileAlive(hostA, hostB, ws, "sshfs-live", mountPoint);

    const { done: holder } = await holdOn(hostA, ws, "sshfs-dead", SHORT_BEAT_MS);
    const pid = enginePid(hostA, "sshfs-dead");
    process.kill(pid, "SIGKILL");
    await holder;
    writeFileSync(join(ws, "release-sshfs-dead"), "");
    const taken = await continueOn(hostB, mountPoint, "sshfs-dead");
    expect(taken.exitCode, taken.stderr).toBe(0);
    expect(taken.json?.status).toBe("COMPLETED");
    const events = expectOneWriter(ws, "sshfs-dead");
    expect(ofType(events, "ERROR")).toEqual([expect.objectContaining({ error_type: "ORPHANED_RUN", error_message: expect.stringMatching(/pid \d+ on host 'hostA'.*made no heartbeat in 1\.5 s/) })]);
  });

  it("paused past the stale period is taken over by a plain continue, and when it resumes it is fenced off: exit 1, OWNERSHIP_LOST, nothing written", async () => {
    const ws = join(root, "paused");
    const { done: holder } = await holdOn(hostA, ws, "paused", SHORT_BEAT_MS);
    const pid = enginePid(hostA, "paused");
    // Stopped (a VM migration, SIGSTOP) while its tool runs; the tool finishes meanwhile, the engine cannot record it.
    process.kill(pid, "SIGSTOP");
    try {
      writeFileSync(join(ws, "release-paused"), "");
      const taken = await continueOn(hostB, ws, "paused");
      expect(taken.exitCode, taken.stderr).toBe(0);
      expect(taken.stderr).toMatch(/watching its heartbeat for 1\.5 s/);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    const journal = readFileSync(join(runDir(ws, "paused"), "journal.jsonl"), "utf8");
    const fenced = await holder;
    expect(fenced.exitCode).toBe(1);
    expect(JSON.parse(String(fenced.stdout)).error.type).toBe("OWNERSHIP_LOST");
    expect(String(fenced.stderr)).toMatch(/no longer owns run paused: process \d+ on hostB took it over/);
    expect(readFileSync(join(runDir(ws, "paused"), "journal.jsonl"), "utf8")).toBe(journal);
    const events = expectOneWriter(ws, "paused");
    expect(ofType(events, "ENGINE_START")).toHaveLength(2);
    expect(ofType(events, "ERROR")).toEqual([expect.objectContaining({ error_type: "ORPHANED_RUN", error_message: expect.stringMatching(/pid \d+ on host 'hostA'.*made no heartbeat/) })]);
  });

  it("stranded on a dead host is listed by list-runs --resumable (a live one elsewhere is not), and a plain continue takes it over, naming the old owner", async () => {
    const ws = join(root, "dead-host");
    const { done: live } = await holdOn(hostA, ws, "live", LIVE_BEAT_MS);
    await holdOn(hostB, ws, "stranded", SHORT_BEAT_MS);
    await hostB.kill();
    writeFileSync(join(ws, "release-stranded"), "");

    const listed = await delta(["list-runs", "-w", ws, "--resumable", "--format", "json"]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout) as Array<{ run_id: string; orphaned: boolean; holder: { state: string; hostname: string } }>;
    expect(runs.map((run) => run.run_id)).toEqual(["stranded"]);
    expect(runs[0]).toMatchObject({ orphaned: true, holder: { state: "dead", hostname: "hostB" } });

    const taken = await continueOn(hostA, ws, "stranded");
    expect(taken.exitCode, taken.stderr).toBe(0);
    const events = expectOneWriter(ws, "stranded");
    expect(ofType(events, "ERROR")).toEqual([expect.objectContaining({ error_type: "ORPHANED_RUN", error_message: expect.stringMatching(/The engine process \(pid \d+ on host 'hostB' \(machine [0-9a-f]{8}, boot [0-9a-f]{8}\)\)/) })]);
    expect(ofType(events, "ACTION_RESULT")[0]).toMatchObject({ status: "ERROR", observation_content: expect.stringContaining("may or may not have taken effect") });

    writeFileSync(join(ws, "release-live"), "");
    expect((await live).exitCode).toBe(0);
    expectOneWriter(ws, "live");
  });
});

describe("a run held on a clone (same hostname, same machine-id, another boot)", { timeout: 120_000 }, () => {
  let cloneA: Host, cloneB: Host;
  beforeAll(async () => {
    if (!unsupported) [cloneA, cloneB] = await hostsFor<[Host, Host]>({ count: 2, prefix: "clone", sameHostname: true, sameMachineId: true });
  }, HOSTS_START_MS);

  it("is not taken from a live holder, though the hostname matches and the pid may mean another process there", async () => {
    expect((await cloneB.exec("hostname")).stdout.trim()).toBe("cloneA");
    await expectRefusedWhileAlive(cloneA, cloneB, join(root, "clones"), "clones");
  });
});
