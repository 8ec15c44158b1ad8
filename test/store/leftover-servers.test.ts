// The janitor's second line against orphaned MCP servers: a recorded group is killed only while its leader is the recorded process.
import { spawn, type ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { thisHost } from "../../src/store/lease/host-identity.js";
import { processStartedAt } from "../../src/process/proc-stat.js";
import { stopLeftoverServers } from "../../src/store/lease/leftover-servers.js";
import { groupEmptiesSoon, groupMembers } from "../support/processes.js";

const started: ChildProcess[] = [];
/** This process's host as metadata.json records it. */
const here = { hostname: hostname(), ...thisHost() };
afterEach(() => {
  for (const child of started.splice(0)) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
});

/** A group like a stdio server's: a leader and a child of its own, detached from this process. */
function serverLikeGroup(): number {
  const child = spawn("sh", ["-c", "sleep 60 & wait"], { detached: true, stdio: "ignore" });
  started.push(child);
  return child.pid!;
}

async function twoMembers(pgid: number): Promise<void> {
  for (let attempt = 0; attempt < 100 && groupMembers(pgid).length < 2; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(groupMembers(pgid).length).toBe(2);
}

describe.skipIf(process.platform !== "linux")("stopLeftoverServers", () => {
  it("kills the whole group of a recorded server whose leader is still the recorded process", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const stopped = stopLeftoverServers([{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! }], here);
    expect(stopped).toEqual([`MCP server 'fs' (process group ${pgid})`]);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("leaves alone a pid that another process holds now (its start time differs)", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const stopped = stopLeftoverServers([{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! - 60_000 }], here);
    expect(stopped).toEqual([]);
    expect(groupMembers(pgid).length).toBe(2);
  });

  it("leaves alone what was recorded on another host, a clone with this hostname or another PID namespace of this kernel", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const recorded = [{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! }];
    expect(stopLeftoverServers(recorded, { ...here, hostname: `not-${hostname()}`, machine_id: "0".repeat(32) })).toEqual([]);
    expect(stopLeftoverServers(recorded, { ...here, machine_id: "0".repeat(32) })).toEqual([]);
    expect(stopLeftoverServers(recorded, { ...here, pid_namespace: "pid:[1]" })).toEqual([]);
    expect(stopLeftoverServers(recorded, { hostname: hostname() })).toEqual([]);
    expect(groupMembers(pgid).length).toBe(2);
    expect(stopLeftoverServers(recorded, here)).toHaveLength(1);
  });

  it("kills a group whose leader is gone but whose members live on", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const recorded = { server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! };
    process.kill(pgid, "SIGKILL");
    for (let attempt = 0; attempt < 100 && groupMembers(pgid).length !== 1; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(groupMembers(pgid).length).toBe(1);
    expect(stopLeftoverServers([recorded], here)).toHaveLength(1);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("does nothing for a group that is gone", () => {
    expect(stopLeftoverServers([{ server: "fs", pid: 2 ** 22 + 12345, start_time_unix: 0 }], here)).toEqual([]);
  });
});
