// End to end: a descriptor the engine's caller left open (`exec 200<dir`) reaches none of its children — tools, hooks, generators: a folder, a file or a pipe is nowhere at that number (the engine holds its own copy until it exits), a socket is /dev/null there.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, openSync, readFileSync, readSync } from "node:fs";
import { createServer, connect, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, DELTA_BIN, modelEnv, NO_MODEL_KEYS, removeDir, tempDir, writeAgent } from "./harness.js";

let root: string;
beforeAll(() => {
  root = tempDir("delta-inherited-fds-");
});
afterAll(() => removeDir(root));

/** What a child finds at 200, 201 and 202: the path each leads to ("none" when nothing is open there), and whether it could write into 200 as a folder. */
const PROBE = 'for n in 200 201 202; do printf "%s=%s\\n" $n "$(readlink /proc/self/fd/$n 2>/dev/null || echo none)"; done; (echo planted > /proc/self/fd/200/planted) 2>/dev/null && echo wrote || echo "could not write"';
const SEEN = "200=none\n201=/dev/null\n202=none\ncould not write\n";

/** Whether a read of the pipe's read end finds its end (every writer closed), without waiting. */
function pipeEnded(readEnd: number): boolean {
  try {
    return readSync(readEnd, Buffer.alloc(16)) === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EAGAIN") return false;
    throw err;
  }
}

describe("descriptors the caller left open", () => {
  it("reach no tool and no hook: a folder and a pipe are nowhere at their numbers, a socket is /dev/null; the engine holds the pipe until it exits", async () => {
    const fifo = join(root, "fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // The read end first, without waiting for a writer; the write end is the engine's, at 202.
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeEnd = openSync(fifo, constants.O_WRONLY);
    const listener: Server = createServer();
    await new Promise<void>((done) => listener.listen(0, "127.0.0.1", done));
    const socket: Socket = connect((listener.address() as AddressInfo).port, "127.0.0.1");
    await new Promise<void>((done) => socket.once("connect", () => done()));
    // While the engine asks its second model request, its tool has run: the pipe must not have ended yet.
    let endedDuringRun: boolean | null = null;
    const server = await startMockLlm((request, index) => {
      if (index === 1) endedDuringRun = pipeEnded(readEnd);
      return index === 0 ? reply.toolCalls([{ name: "run", arguments: { script: PROBE } }]) : reply.text("done");
    });
    const hooks = `post_tool_execution:\n  command: [sh, -c, '(${PROBE}) > hook-saw.txt']\n`;
    const agent = writeAgent(root, { agentYaml: 'name: fds\nllm:\n  model: mock-model\ntools:\n  - name: run\n    exec: "sh -c ${script}"\n', hooksYaml: hooks });
    const ws = join(root, "ws");
    mkdirSync(join(ws, ".delta"), { recursive: true });
    const journalFolder = openSync(join(ws, ".delta"), "r");
    try {
      const stdio: (number | "ignore" | "pipe" | Socket)[] = ["ignore", "pipe", "pipe", ...new Array<"ignore">(197).fill("ignore"), journalFolder, socket, writeEnd];
      const child = spawn(process.execPath, [DELTA_BIN, "run", "--agent", agent, "-w", ws, "--run-id", "r1", "-m", "go"], { env: { ...process.env, ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl) }, stdio });
      closeSync(writeEnd);
      let stderr = "";
      child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout!.resume();
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(code, stderr).toBe(0);
      const [result] = actionResults(ws, "r1");
      expect(result!.observation_content).toBe(SEEN);
      expect(readFileSync(join(ws, "hook-saw.txt"), "utf8")).toBe(SEEN);
      expect(existsSync(join(ws, ".delta", "planted"))).toBe(false);
      expect(endedDuringRun).toBe(false);
      expect(pipeEnded(readEnd)).toBe(true);
    } finally {
      closeSync(journalFolder);
      closeSync(readEnd);
      socket.destroy();
      listener.close();
      await server.close();
    }
  }, 60_000);
});
