// The proxy of a box with a host list: its record of refusals stays bounded however a tool floods it, and its socket lives in a private folder no box sees.
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { privateFolder, proxySocketsDir, startHostProxy } from "../../../src/process/sandbox/host-proxy.js";
import { engineRoute } from "../../../src/run/engine-route.js";

/** A CONNECT for `target` through the proxy's socket: its status. */
function connectThrough(socketPath: string, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "CONNECT", path: target });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("connect", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("the refused connections a proxy records", () => {
  it("keep each target once, at most 20, each cut to 262 characters, and count the rest", async () => {
    const proxy = await startHostProxy(["example.com"], engineRoute({}));
    try {
      const long = `${"x".repeat(7000)}.example`;
      for (let index = 0; index < 60; index++) expect(await connectThrough(proxy.socketPath, `h${index}-${long}:443`)).toBe(403);
      for (let index = 0; index < 5; index++) await connectThrough(proxy.socketPath, "again.example:443");
      const { targets, more } = proxy.refused();
      expect(targets).toHaveLength(20);
      expect(targets[0]).toBe(`h0-${long}:443`.slice(0, 261) + "…");
      expect(targets.every((target) => target.length <= 262)).toBe(true);
      // 40 long names and five refusals of one more target found the list full.
      expect(more).toBe(45);
    } finally {
      await proxy.close();
    }
  });

  it("counts a target already listed once only", async () => {
    const proxy = await startHostProxy(["example.com"], engineRoute({}));
    try {
      for (let index = 0; index < 3; index++) await connectThrough(proxy.socketPath, "other.example:443");
      expect(proxy.refused()).toEqual({ targets: ["other.example:443"], more: 0 });
    } finally {
      await proxy.close();
    }
  });
});

describe("where the proxy's socket lives", () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it("under /tmp, whatever TMPDIR says, in this user's 0700 folder", async () => {
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = mkdtempSync(join(tmpdir(), "delta-tmpdir-"));
    made.push(process.env.TMPDIR);
    try {
      const proxy = await startHostProxy(["example.com"], engineRoute({}));
      try {
        expect(dirname(dirname(proxy.socketPath))).toBe(proxySocketsDir());
        expect(proxySocketsDir()).toBe(`/tmp/delta-sockets-${process.getuid!()}`);
        expect(statSync(proxySocketsDir()).mode & 0o777).toBe(0o700);
        expect(statSync(dirname(proxy.socketPath)).mode & 0o777).toBe(0o700);
      } finally {
        await proxy.close();
      }
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
    }
  });

  it("refuses a folder someone else made first, or that others may enter", () => {
    const base = mkdtempSync(join(tmpdir(), "delta-squat-"));
    made.push(base);
    const open = join(base, "open");
    mkdirSync(open);
    chmodSync(open, 0o755);
    expect(() => privateFolder(open)).toThrow(`${open} is not a private folder of this user`);
    if (process.getuid!() === 0) {
      const theirs = join(base, "theirs");
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(() => privateFolder(theirs)).toThrow("is not a private folder of this user");
    }
    expect(privateFolder(join(base, "new"))).toBe(join(base, "new"));
  });
});
