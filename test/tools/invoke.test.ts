import { mkdtemp, readFile, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { invokeTool, type InvokeRequest } from "../../src/tools/invoke.js";
import { inheritedEnv } from "../support/inherited-env.js";

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "delta-invoke-")));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(argv: string[], extra: Partial<InvokeRequest> = {}) {
  return invokeTool({ argv, cwd: dir, env: {}, baseEnv: inheritedEnv(), timeoutMs: 10_000, ...extra });
}

describe("invokeTool", () => {
  it("reports exit 0 as SUCCESS with the output verbatim", async () => {
    const result = await run(["sh", "-c", "printf 'a\\nb\\n'"]);
    expect(result).toMatchObject({ status: "SUCCESS", exitCode: 0, stdout: "a\nb\n", observation: "a\nb\n", spawnError: null });
  });

  it("reports a non-zero exit as FAILED and keeps stdout and stderr apart, labelled in the observation", async () => {
    const result = await run(["sh", "-c", "echo out; echo err >&2; exit 3"]);
    expect(result.status).toBe("FAILED");
    expect(result.exitCode).toBe(3);
    expect(result.stdout).toBe("out\n");
    expect(result.stderr).toBe("err\n");
    expect(result.observation).toBe("[stdout]\nout\n[stderr]\nerr\n");
  });

  it("says so when a tool prints nothing", async () => {
    expect((await run(["true"])).observation).toBe("(no output)");
  });

  it("feeds the stdin parameter to the process", async () => {
    const result = await run(["cat"], { stdin: "héllo\nworld" });
    expect(result.stdout).toBe("héllo\nworld");
  });

  it("runs in the given directory with the given variables on top of the engine's environment", async () => {
    const result = await run(["sh", "-c", 'pwd; echo "$DELTA_RUN_ID"; echo "$PATH" | grep -c /'], { env: { DELTA_RUN_ID: "run-42" } });
    expect(result.stdout).toBe(`${dir}\nrun-42\n1\n`);
  });

  it("says in the observation that a timed-out tool's group was killed, and reports an ERROR", async () => {
    const result = await run(["sh", "-c", "echo started; sleep 30"], { timeoutMs: 300 });
    expect(result.timedOut).toBe(true);
    expect(result.status).toBe("ERROR");
    expect(result.stdout).toBe("started\n");
    expect(result.observation).toContain("started\n[timed out after 300 ms");
  });

  it("says in the observation that an interrupted tool's group was killed, and reports an ERROR", async () => {
    const controller = new AbortController();
    const pending = run(["sh", "-c", "echo started; sleep 30"], { signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result).toMatchObject({ aborted: true, timedOut: false, status: "ERROR" });
    expect(result.observation).toContain("[interrupted");
  });

  it("does not start a tool when the engine was already interrupted", async () => {
    const result = await run(["sh", "-c", `touch ${join(dir, "ran")}`], { signal: AbortSignal.abort() });
    expect(result).toMatchObject({ aborted: true, status: "ERROR", observation: "[interrupted before the tool started]" });
    await expect(readFile(join(dir, "ran"))).rejects.toThrow();
  });

  it("reports a missing command as an ERROR that names it", async () => {
    const result = await run(["no-such-command-delta-test", "x"]);
    expect(result.status).toBe("ERROR");
    expect(result.spawnError).toBe("command not found: no-such-command-delta-test");
    expect(result.observation).toBe("command not found: no-such-command-delta-test");
  });

  it("reports an argument the system cannot pass (a NUL byte) as an ERROR instead of throwing", async () => {
    const result = await run(["echo", "a\u0000b"]);
    expect(result.status).toBe("ERROR");
    expect(result.spawnError).toMatch(/^could not start echo: .*null bytes/);
  });

  it("reports an argument beyond the kernel's per-argument limit as a spawn error", async () => {
    const result = await run(["printf", "%s", "x".repeat(200_000)]);
    expect(result.status).toBe("ERROR");
    expect(result.observation).toMatch(/E2BIG/);
  });

  it("reports a missing working directory instead of a misleading command-not-found", async () => {
    const result = await run(["true"], { cwd: join(dir, "gone") });
    expect(result.spawnError).toBe(`working directory does not exist or is not a directory: ${join(dir, "gone")}`);
  });

  it("bounds the observation to head and tail with a marker but keeps the complete output", async () => {
    const script = "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done";
    const result = await run(["sh", "-c", script], { maxObservationBytes: 1_000 });
    const lines = Array.from({ length: 2000 }, (_, i) => `line-${i}\n`).join("");
    expect(result.stdout).toBe(lines);
    expect(result.observation.startsWith("line-0\nline-1\n")).toBe(true);
    expect(result.observation.endsWith("line-1998\nline-1999\n")).toBe(true);
    const omitted = Number(/\[\.\.\. (\d+) bytes omitted \.\.\.\]/.exec(result.observation)?.[1]);
    expect(omitted).toBe(Buffer.byteLength(lines) - 1_000);
    expect(Buffer.byteLength(result.observation)).toBeLessThan(1_100);
  });

  it("keeps several megabytes of output complete in stdout and bounds the observation", async () => {
    const result = await run(["node", "-e", "process.stdout.write('x'.repeat(5 * 1024 * 1024))"]);
    expect(result.stdout.length).toBe(5 * 1024 * 1024);
    expect(Buffer.byteLength(result.observation)).toBeLessThan(64 * 1024 + 100);
  });
});
