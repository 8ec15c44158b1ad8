// The janitor's second line against orphaned MCP servers: a group named by the dead holder's owner record (or, for a record
// written before servers were noted there, by metadata.json) is killed only while it is still the recorded group.
import { spawn, type ChildProcess } from "node:child_process";
import { hostname } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { thisHost } from "../../src/process/host-probe.js";
import { ownRecord, OwnerRecordSchema, type OwnerRecord } from "../../src/store/lease/owner-record.js";
import { processStartedAt } from "../../src/process/proc-stat.js";
import { stopLeftoverServers } from "../../src/store/lease/leftover-servers.js";
import { groupEmptiesSoon, groupMembers } from "../support/processes.js";

const started: ChildProcess[] = [];
/** This process's host as metadata.json records it. */
const here = { hostname: hostname(), ...thisHost() };

/** metadata.json's record of one server, on `host`, and nothing in the owner record: what an engine before server_groups left. */
function inMetadata(entries: Array<{ server: string; pid: number; start_time_unix: number }>, host: typeof here | { hostname: string; machine_id?: string } = here) {
  return { owner: recordWithout(), metadata: { ...host, mcp_server_processes: entries } };
}

/** An owner record as the engine wrote it before it noted servers: no server_groups field at all. */
function recordWithout(): OwnerRecord {
  const { server_groups: _dropped, ...old } = ownRecord(1, null);
  return OwnerRecordSchema.parse(old);
}
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
    const stopped = await stopLeftoverServers(inMetadata([{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! }]));
    expect(stopped).toEqual([`MCP server 'fs' (process group ${pgid})`]);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("leaves alone a pid that another process holds now (its start time differs)", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const stopped = await stopLeftoverServers(inMetadata([{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! - 60_000 }]));
    expect(stopped).toEqual([]);
    expect(groupMembers(pgid).length).toBe(2);
  });

  it("leaves alone what was recorded on another host, a clone with this hostname or another PID namespace of this kernel", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const recorded = [{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! }];
    expect(await stopLeftoverServers(inMetadata(recorded, { ...here, hostname: `not-${hostname()}`, machine_id: "0".repeat(32) }))).toEqual([]);
    expect(await stopLeftoverServers(inMetadata(recorded, { ...here, machine_id: "0".repeat(32) }))).toEqual([]);
    expect(await stopLeftoverServers(inMetadata(recorded, { ...here, pid_namespace: "pid:[1]" }))).toEqual([]);
    expect(await stopLeftoverServers(inMetadata(recorded, { hostname: hostname() }))).toEqual([]);
    const clone = { ...ownRecord(1, null), machine_id: "0".repeat(32), server_groups: [{ server: "fs", pgid, started_at_unix: processStartedAt(pgid)! }] };
    expect(await stopLeftoverServers({ owner: clone, metadata: here })).toEqual([]);
    expect(groupMembers(pgid).length).toBe(2);
    expect(await stopLeftoverServers(inMetadata(recorded))).toHaveLength(1);
  });

  it("kills a group whose leader is gone but whose members live on", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const recorded = { server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! };
    process.kill(pgid, "SIGKILL");
    for (let attempt = 0; attempt < 100 && groupMembers(pgid).length !== 1; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(groupMembers(pgid).length).toBe(1);
    expect(await stopLeftoverServers(inMetadata([recorded]))).toHaveLength(1);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("does nothing for a group that is gone", async () => {
    expect(await stopLeftoverServers(inMetadata([{ server: "fs", pid: 2 ** 22 + 12345, start_time_unix: 0 }]))).toEqual([]);
  });

  it("takes the groups from the owner record when it names them, whatever metadata.json says (lost, rebuilt, or stale)", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const owner = { ...ownRecord(1, null), server_groups: [{ server: "fs", pgid, started_at_unix: processStartedAt(pgid)! }] };
    expect(await stopLeftoverServers({ owner, metadata: { ...here } })).toEqual([`MCP server 'fs' (process group ${pgid})`]);
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("trusts a record that says no servers over a metadata.json that names one", async () => {
    const pgid = serverLikeGroup();
    await twoMembers(pgid);
    const owner = { ...ownRecord(1, null), server_groups: [] };
    expect(await stopLeftoverServers({ owner, metadata: { ...here, mcp_server_processes: [{ server: "fs", pid: pgid, start_time_unix: processStartedAt(pgid)! }] } })).toEqual([]);
    expect(groupMembers(pgid).length).toBe(2);
  });
});

describe("owner records across engine versions", () => {
  it("reads a record written before server_groups existed, and one with fields it does not know (as an older engine reads a newer record)", () => {
    expect(recordWithout().server_groups).toBeUndefined();
    const newer = { ...ownRecord(3, null), server_groups: [{ server: "fs", pgid: 42, started_at_unix: 1 }], some_later_field: { any: "thing" } };
    const parsed = OwnerRecordSchema.safeParse(JSON.parse(JSON.stringify(newer)));
    expect(parsed.success).toBe(true);
    expect(parsed.data?.server_groups).toEqual([{ server: "fs", pgid: 42, started_at_unix: 1 }]);
  });
});
