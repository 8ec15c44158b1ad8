// The death watch: process groups die with the process that watched over them, kill -9 included, and live on once released.
import { execa } from "execa";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deathWatchOf, groupEmptiesSoon, groupMembers } from "../support/processes.js";
import { bundleScript } from "../support/script-bundle.js";

let dir: string;
let script: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "death-watch-"));
  // Starts a detached `sleep` group, watches it (releasing the watch when told), prints the group id, then idles.
  script = await bundleScript(
    join(dir, "watcher.cjs"),
    `import { spawn } from "node:child_process";
      import { watchForDeath } from ${JSON.stringify(resolve("src/process/death-watch.ts"))};
      const group = spawn("sleep", ["60"], { detached: true, stdio: "ignore" });
      group.unref();
      const watch = watchForDeath([group.pid]);
      if (process.argv[2] === "release") watch.release();
      console.log(group.pid);
      setInterval(() => {}, 1000);`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startWatcher(mode: "watch" | "release") {
  const child = execa(process.execPath, [script, mode], { reject: false, buffer: false });
  const pgid = await new Promise<number>((done) => child.stdout!.once("data", (chunk: Buffer) => done(Number(chunk.toString().trim()))));
  return { child, pgid };
}

function watching(pgid: number): boolean {
  return deathWatchOf(pgid) !== null;
}

async function waitUntil(check: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 200 && !check(); attempt += 1) await new Promise((done) => setTimeout(done, 10));
  expect(check()).toBe(true);
}

describe.skipIf(process.platform !== "linux")("watchForDeath", () => {
  it("kills the watched group when the watching process is killed with SIGKILL", async () => {
    const { child, pgid } = await startWatcher("watch");
    expect(groupMembers(pgid)).toEqual([pgid]);
    expect(watching(pgid)).toBe(true);
    child.kill("SIGKILL");
    await child;
    expect(await groupEmptiesSoon(pgid)).toBe(true);
  });

  it("leaves the group alone once released, when its process stops the group itself", async () => {
    const { child, pgid } = await startWatcher("release");
    await waitUntil(() => !watching(pgid));
    child.kill("SIGKILL");
    await child;
    expect(groupMembers(pgid)).toEqual([pgid]);
    process.kill(-pgid, "SIGKILL");
  });
});
