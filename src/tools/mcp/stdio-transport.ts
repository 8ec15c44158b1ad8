// An MCP Transport over the pipes of a server the process runner started: one JSON-RPC message per line each way.
import { StringDecoder } from "node:string_decoder";
import { deserializeMessage, ErrorCode, McpError, serializeMessage, type JSONRPCMessage, type Transport } from "./sdk.js";
import type { StartedProcess } from "../../process/start-process.js";
import { TailCapture } from "../../process/capture.js";
import { PIPE_IDLE_MS } from "../../process/run-process.js";

/** A line longer than this (a runaway server) drops the connection rather than exhausting memory; the exec tools' capture limit. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** How long a server gets to exit on the end of its stdin before its group is signalled (the protocol's shutdown order). */
const STDIN_CLOSE_GRACE_MS = 500;
/** What is kept of a server's stderr for a message that names why it failed. */
const STDERR_TAIL_BYTES = 2_048;

/** How the server's process ended, once it has. */
interface ServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The engine had asked it to stop, so its end is no fault of its own. */
  stopped: boolean;
}

interface StdioTransportOptions {
  /** Each line of stdout that is not a JSON-RPC message (the protocol allows nothing else there). */
  onGarbage?: (line: string) => void;
  /** Each line the server writes to stderr. */
  onStderrLine?: (line: string) => void;
}

export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly stderrTail = new TailCapture(STDERR_TAIL_BYTES);
  /** Set once the process has exited and its pipes are closed. */
  exit: ServerExit | null = null;
  /** The engine asked the server, still reading its input, to stop; or it signals one that stopped reading and lingers. */
  private stopRequested = false;
  /** A write found the server's input closed: it stopped reading on its own. */
  private inputLost = false;
  readonly closed: Promise<void>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private stderrLine = "";
  private readonly stderrDecoder = new StringDecoder("utf8");
  private closeNotified = false;

  constructor(
    private readonly server: StartedProcess,
    private readonly options: StdioTransportOptions = {},
  ) {
    const { child } = server;
    this.closed = new Promise((resolve) => {
      let settled = false;
      let idle: NodeJS.Timeout | undefined;
      const settle = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (settled) return;
        settled = true;
        clearTimeout(idle);
        this.exit = { code, signal, stopped: this.stopRequested };
        this.notifyClose();
        resolve();
      };
      // "close": exited and every pipe drained, so the stderr tail is complete when the exit is known.
      child.once("close", settle);
      // The exec tools' rule: once the server has exited, a child it left (in another session) may hold its pipes
      // for ever; the wait ends when they have been idle for PIPE_IDLE_MS, and at the latest after the shutdown window.
      child.once("exit", (code, signal) => {
        const stopWaiting = (): void => {
          child.stdout.destroy();
          child.stderr.destroy();
          settle(code, signal);
        };
        const waitForPipes = (): void => {
          clearTimeout(idle);
          idle = setTimeout(stopWaiting, PIPE_IDLE_MS);
        };
        waitForPipes();
        child.stdout.on("data", waitForPipes);
        child.stderr.on("data", waitForPipes);
        setTimeout(stopWaiting, STDIN_CLOSE_GRACE_MS + PIPE_IDLE_MS).unref();
        // Whatever the server left in its group goes with it.
        void this.server.stopGroup();
      });
    });
  }

  async start(): Promise<void> {
    const { child } = this.server;
    child.stdout.on("data", (chunk: Buffer) => this.readStdout(chunk));
    child.stderr.on("data", (chunk: Buffer) => this.readStderr(chunk));
  }

  /**
   * A message the server can no longer read (its stdin closed: EPIPE, or the process gone) is the connection closed, as
   * the SDK says it when the transport closes first: which of the two the engine notices first is a race it must not show.
   */
  send(message: JSONRPCMessage): Promise<void> {
    const { stdin } = this.server.child;
    if (this.exit !== null || !stdin.writable) return Promise.reject(this.inputClosed("its stdin is closed"));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(this.inputClosed(error.message)) : resolve()));
    });
  }

  /** The protocol's shutdown: stdin closed first, then SIGTERM and SIGKILL to the whole group (which also ends what the server left behind). */
  async close(): Promise<void> {
    // A server that stopped reading first is going away on its own: an exit within the grace is its own doing.
    if (!this.inputLost) this.stopRequested = true;
    this.server.child.stdin.end();
    await Promise.race([this.closed, new Promise((resolve) => setTimeout(resolve, STDIN_CLOSE_GRACE_MS).unref())]);
    this.stopRequested = true;
    await this.server.stopGroup();
    await this.closed;
  }

  private inputClosed(detail: string): McpError {
    if (!this.stopRequested) this.inputLost = true;
    return new McpError(ErrorCode.ConnectionClosed, `The server no longer reads its input (${detail})`);
  }

  private notifyClose(): void {
    if (this.closeNotified) return;
    this.closeNotified = true;
    if (this.stderrLine !== "") this.options.onStderrLine?.(this.stderrLine);
    this.onclose?.();
  }

  /** Splits stdout into lines without re-copying what came before the newline. */
  private readStdout(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      this.pending.push(chunk.subarray(start, newline));
      const line = Buffer.concat(this.pending).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      this.deliver(line);
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
      if (this.pendingBytes > MAX_MESSAGE_BYTES) {
        this.pending = [];
        this.pendingBytes = 0;
        this.onerror?.(new Error(`the server wrote more than ${MAX_MESSAGE_BYTES} bytes without a newline`));
        this.options.onGarbage?.(`(more than ${MAX_MESSAGE_BYTES} bytes without a newline)`);
      }
    }
  }

  private deliver(line: string): void {
    if (line.trim() === "") return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch {
      this.options.onGarbage?.(line);
      return;
    }
    this.onmessage?.(message);
  }

  private readStderr(chunk: Buffer): void {
    this.stderrTail.push(chunk);
    if (!this.options.onStderrLine) return;
    const lines = (this.stderrLine + this.stderrDecoder.write(chunk)).split("\n");
    this.stderrLine = lines.pop() ?? "";
    for (const line of lines) this.options.onStderrLine(line.replace(/\r$/, ""));
  }
}
