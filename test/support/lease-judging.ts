// Set-up for tests that judge lease holders: heartbeats every `beatMs` (DELTA_HEARTBEAT_MS, restored after), a node process that started before any record the tests write, so a record naming it is judged alive, and pids no process has.
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll } from "vitest";

/** Registers the file's beforeAll/afterAll; the process is there from beforeAll on. */
export function fastBeatsAndALiveProcess(beatMs: number): { readonly live: ChildProcess } {
  let savedBeat: string | undefined;
  let live: ChildProcess | undefined;
  beforeAll(async () => {
    savedBeat = process.env.DELTA_HEARTBEAT_MS;
    process.env.DELTA_HEARTBEAT_MS = String(beatMs);
    const started = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    await new Promise((resolve) => started.once("spawn", resolve));
    live = started;
  });
  afterAll(() => {
    live?.kill("SIGKILL");
    if (savedBeat === undefined) delete process.env.DELTA_HEARTBEAT_MS;
    else process.env.DELTA_HEARTBEAT_MS = savedBeat;
  });
  return {
    get live(): ChildProcess {
      if (live === undefined) throw new Error("the live process is started in beforeAll");
      return live;
    },
  };
}

/** A pid that no process has now: a node process that ran and exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}
