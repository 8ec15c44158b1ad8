// Starts a stdio MCP server through the process runner (its own process group, the child environment) and says why it stopped.
import { describeSpawnFailure } from "../../process/spawn-failure.js";
import { ProcessStartError, startProcess } from "../../process/start-process.js";
import { McpServerError } from "../../errors.js";
import type { SandboxBox } from "../../process/sandbox/argv.js";
import type { ServerLink } from "./server-link.js";
import { ProcessStdioTransport } from "./stdio-transport.js";

interface StdioLaunch {
  argv: string[];
  cwd: string;
  /** The server's whole environment. */
  env: Record<string, string>;
  /** The box it runs in, when its policy asks for one. */
  sandbox?: SandboxBox | undefined;
}

/** How much of a line that is not JSON-RPC a message quotes. */
const QUOTED_LINE_CHARS = 200;
/** How long a process that has just exited gets to flush its stderr into a failure message. */
const EXIT_FLUSH_MS = 200;

export async function launchStdioServer(where: string, launch: StdioLaunch, log: (line: string) => void): Promise<ServerLink> {
  let started;
  try {
    started = await startProcess({ argv: launch.argv, cwd: launch.cwd, env: launch.env, sandbox: launch.sandbox });
  } catch (err) {
    if (err instanceof ProcessStartError) throw new McpServerError(`${where} could not start: ${describeSpawnFailure(err.failure)} (command: ${JSON.stringify(launch.argv)})`);
    throw err;
  }
  let garbage: string | null = null;
  let onGarbage: ((line: string) => void) | null = null;
  const transport = new ProcessStdioTransport(started, {
    onGarbage: (line) => {
      log(`${where} wrote a line that is not JSON-RPC to stdout: ${line.slice(0, QUOTED_LINE_CHARS)}`);
      garbage ??= line;
      onGarbage?.(line);
    },
    onStderrLine: (line) => log(`${where} stderr: ${line}`),
  });
  const pid = started.child.pid!;
  return {
    transport,
    pid,
    onProtocolViolation(handler) {
      onGarbage = handler;
    },
    async diagnose(exitWithinMs = EXIT_FLUSH_MS) {
      const notes: string[] = [];
      if (garbage !== null) {
        notes.push(
          `it wrote a line to stdout that is not a JSON-RPC message: ${JSON.stringify(garbage.slice(0, QUOTED_LINE_CHARS))} ` +
            "(an MCP server writes only protocol messages to stdout, and logs to stderr)",
        );
      }
      await Promise.race([transport.closed, new Promise((resolve) => setTimeout(resolve, Math.max(exitWithinMs, EXIT_FLUSH_MS)).unref())]);
      const exit = transport.exit;
      if (exit !== null && !exit.stopped) notes.push(exit.signal !== null ? `its process was killed by ${exit.signal}` : `its process exited with code ${exit.code}`);
      const tail = transport.stderrTail.text();
      notes.push(tail === "" ? "it wrote nothing to stderr" : `its stderr ended with:\n${indent(tail)}`);
      return notes.join("; ");
    },
    close: () => transport.close(),
  };
}

function indent(text: string): string {
  return text.split("\n").map((line) => `  ${line}`).join("\n");
}
