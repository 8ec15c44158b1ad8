// What the engine holds of one MCP server beside its client: the transport, its process, and why it stopped.
import type { Transport } from "./sdk.js";

export interface ServerLink {
  transport: Transport;
  /** The stdio server's process, which leads its own process group; null for a url server. */
  pid: number | null;
  /** Called at the first message that breaks the protocol (a stdio line that is not JSON-RPC). */
  onProtocolViolation(handler: (detail: string) => void): void;
  /**
   * Facts a failure message adds: how the process ended, what it wrote to stderr, what broke the protocol. A process
   * that has just exited gets a moment to flush its stderr; `exitWithinMs` waits that long for one that is still
   * going away (it closed its input).
   */
  diagnose(exitWithinMs?: number): Promise<string>;
  /** Stops the server (for stdio, its whole process group) and resolves once it is gone. */
  close(): Promise<void>;
}
