import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runProcess, type ProcessRequest } from "../../src/process/run-process.js";
import { diesSoon, pidFrom } from "../support/processes.js";

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "delta-process-")));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const PATH_ONLY = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

function run(argv: string[], extra: Partial<ProcessRequest> = {}) {
  return runProcess({ argv, cwd: dir, env: PATH_ONLY, timeoutMs: 10_000, capture: { keep: "head", maxChars: 1024 * 1024 }, ...extra });
}

describe("runProcess", () => {
  it("reports the exit code and both streams as flat facts", async () => {
    const result = await run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false, aborted: false, overLimit: false, spawnError: null, stdout: "out\n", stderr: "err\n" });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("feeds the stdin text to the process", async () => {
    const result = await run(["cat"], { stdin: "héllo\nworld" });
    expect(result.stdout).toBe("héllo\nworld");
  });

  it("closes stdin when there is no stdin text so a reader does not hang", async () => {
    const result = await run(["cat"], { timeoutMs: 3_000 });
    expect(result).toMatchObject({ timedOut: false, exitCode: 0, stdout: "" });
  });

  it("runs in the given directory with exactly the given environment", async () => {
    const result = await run(["sh", "-c", 'pwd; echo "$ONLY_THIS"; echo "${HOME-unset}"'], { env: { ...PATH_ONLY, ONLY_THIS: "yes" } });
    expect(result.stdout).toBe(`${dir}\nyes\nunset\n`);
  });

  it("passes hostile arguments as they are, without a shell", async () => {
    const hostile = "$(touch pwned); `touch pwned2` ; rm -rf * | & > x";
    const result = await run(["printf", "%s", hostile]);
    expect(result.stdout).toBe(hostile);
    await expect(readFile(join(dir, "pwned"))).rejects.toThrow();
  });

  it("kills the whole process group on timeout, grandchildren included", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const result = await run(["sh", "-c", `sleep 30 & echo $! > ${pidFile}; echo started; sleep 30`], { timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, aborted: false, stdout: "started\n" });
    expect(await diesSoon(await pidFrom(pidFile))).toBe(true);
  });

  it("kills a group member that ignores SIGTERM once the grace period is over", async () => {
    const pidFile = join(dir, "stubborn.pid");
    const result = await run(["sh", "-c", `sh -c 'trap "" TERM; echo $$ > ${pidFile}; sleep 30' & wait`], { timeoutMs: 300, killGraceMs: 500 });
    expect(result.timedOut).toBe(true);
    expect(await diesSoon(await pidFrom(pidFile))).toBe(true);
  });

  it("with no grace, kills the group with SIGKILL at once: no SIGTERM comes first", async () => {
    const termFile = join(dir, "term.txt");
    const result = await run(["sh", "-c", `trap "echo TERM > ${termFile}" TERM; echo ready; sleep 30 & wait; sleep 30 & wait`], { timeoutMs: 200, killGraceMs: 0 });
    expect(result).toMatchObject({ timedOut: true, signal: "SIGKILL", stdout: "ready\n" });
    await expect(readFile(termFile)).rejects.toThrow();
  });

  it("kills the process group when the signal aborts", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const controller = new AbortController();
    const pending = run(["sh", "-c", `sleep 30 & echo $! > ${pidFile}; sleep 30`], { signal: controller.signal });
    const grandchild = await pidFrom(pidFile);
    controller.abort();
    expect(await pending).toMatchObject({ aborted: true, timedOut: false });
    expect(await diesSoon(grandchild)).toBe(true);
  });

  it("starts nothing when the signal has already aborted", async () => {
    const result = await run(["sh", "-c", `touch ${join(dir, "ran")}`], { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ aborted: true, exitCode: null, spawnError: null });
    await expect(readFile(join(dir, "ran"))).rejects.toThrow();
  });

  it("stops a process whose output goes over a head limit and keeps the head", async () => {
    const result = await run(["sh", "-c", "while :; do echo xxxxxxxxxx; done"], { capture: { keep: "head", maxChars: 1000 } });
    expect(result).toMatchObject({ overLimit: true, timedOut: false });
    expect(result.stdout).toHaveLength(1000);
  });

  it("keeps head and tail of a head-and-tail capture and lets the process finish", async () => {
    const result = await run(["sh", "-c", "head -c 1000 /dev/zero | tr '\\0' a; printf END"], { capture: { keep: "head-and-tail", maxBytes: 100 } });
    expect(result).toMatchObject({ overLimit: false, exitCode: 0 });
    expect(result.stdout).toBe(`${"a".repeat(50)}\n[... 903 bytes truncated ...]\n${"a".repeat(47)}END`);
  });

  it("keeps several megabytes of output complete", async () => {
    const result = await run(["node", "-e", "process.stdout.write('x'.repeat(5 * 1024 * 1024))"], { capture: { keep: "head", maxChars: 64 * 1024 * 1024 } });
    expect(result.stdout.length).toBe(5 * 1024 * 1024);
  });
});

describe("runProcess when the process cannot start", () => {
  it("says the command was not found", async () => {
    const result = await run(["no-such-command-delta-test", "x"]);
    expect(result.spawnError).toMatchObject({ reason: "not-found", file: "no-such-command-delta-test", code: "ENOENT" });
    expect(result.exitCode).toBeNull();
  });

  it("says an empty argv is an empty command", async () => {
    expect((await run([])).spawnError).toMatchObject({ reason: "empty-command" });
  });

  it("reports an argument the system cannot pass (a NUL byte) instead of throwing", async () => {
    const result = await run(["echo", "a\u0000b"]);
    expect(result.spawnError).toMatchObject({ reason: "other", file: "echo", message: expect.stringMatching(/null bytes/) });
  });

  it("reports an argument beyond the kernel's per-argument limit", async () => {
    const result = await run(["printf", "%s", "x".repeat(200_000)]);
    expect(result.spawnError).toMatchObject({ code: "E2BIG" });
  });

  it("blames a missing working directory, not the command", async () => {
    const result = await run(["true"], { cwd: join(dir, "gone") });
    expect(result.spawnError).toMatchObject({ reason: "no-working-directory", cwd: join(dir, "gone") });
  });
});

describe("runProcess with a daemon that keeps the output open", () => {
  /** Starts a daemon outside the process group (setsid) that inherits stdout and stderr, and writes its pid. */
  const daemon = (pidFile: string): string => `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 1000' &`;
  const pids: number[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });

  it("settles once the process has exited and the pipes stay quiet, with what was captured", async () => {
    const pidFile = join(dir, "daemon.pid");
    const result = await run(["sh", "-c", `${daemon(pidFile)} echo started`]);
    pids.push(await pidFrom(pidFile));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, outputLeftOpen: true, stdout: "started\n" });
  });

  it("keeps reading while output still flows after the process exited", async () => {
    const result = await run(["sh", "-c", "(for i in 1 2 3 4; do sleep 0.1; echo late-$i; done) & echo early"]);
    expect(result).toMatchObject({ exitCode: 0, outputLeftOpen: false, stdout: "early\nlate-1\nlate-2\nlate-3\nlate-4\n" });
  });

  it("settles after a timeout even though the daemon outside the group still holds the pipes", async () => {
    const pidFile = join(dir, "daemon.pid");
    const result = await run(["sh", "-c", `${daemon(pidFile)} echo starting; sleep 1000`], { timeoutMs: 300, killGraceMs: 500 });
    pids.push(await pidFrom(pidFile));
    expect(result).toMatchObject({ timedOut: true, outputLeftOpen: true, stdout: "starting\n" });
  });

  it("settles after an abort even though the daemon outside the group still holds the pipes", async () => {
    const pidFile = join(dir, "daemon.pid");
    const controller = new AbortController();
    const pending = run(["sh", "-c", `trap '' TERM; ${daemon(pidFile)} echo starting; while :; do sleep 1; done`], { signal: controller.signal, killGraceMs: 500 });
    pids.push(await pidFrom(pidFile));
    controller.abort();
    expect(await pending).toMatchObject({ aborted: true, outputLeftOpen: true, stdout: "starting\n" });
  });
});
