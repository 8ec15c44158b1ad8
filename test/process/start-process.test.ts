import { once } from "node:events";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ProcessStartError, startProcess } from "../../src/process/start-process.js";
import { diesSoon, pidFrom } from "../support/processes.js";

let dir: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "delta-start-")));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

describe("startProcess", () => {
  it("talks to a long-lived child over its stdin and stdout", async () => {
    const started = await startProcess({ argv: ["cat"], cwd: dir, env });
    started.child.stdout.setEncoding("utf8");
    started.child.stdin.write("ping\n");
    const [line] = (await once(started.child.stdout, "data")) as [string];
    expect(line).toBe("ping\n");
    await started.stopGroup();
    expect(started.child.exitCode !== null || started.child.signalCode !== null).toBe(true);
  });

  it("stops the whole group, children included, and a second stop waits for the same end", async () => {
    const pidFile = join(dir, "child.pid");
    const started = await startProcess({ argv: ["sh", "-c", `sleep 30 & echo $! > ${pidFile}; wait`], cwd: dir, env, killGraceMs: 500 });
    started.child.stdout.resume();
    started.child.stderr.resume();
    const grandchild = await pidFrom(pidFile);
    await Promise.all([started.stopGroup(), started.stopGroup()]);
    expect(await diesSoon(grandchild)).toBe(true);
  });

  it("rejects with the reason when the program does not exist", async () => {
    const failure = startProcess({ argv: ["no-such-server-delta-test"], cwd: dir, env });
    await expect(failure).rejects.toBeInstanceOf(ProcessStartError);
    await expect(failure).rejects.toMatchObject({ failure: { reason: "not-found", file: "no-such-server-delta-test" } });
  });
});
