// One MCP server as a client of the official SDK holds it: initialize and list its tools within a deadline, call a tool, close.
import { Client, ErrorCode, McpError, type CallToolResult } from "./sdk.js";
import { ENGINE_VERSION } from "../../engine-version.js";
import { errorMessage, InterruptedError, McpServerError } from "../../errors.js";
import { pausePoint } from "../../pause-point.js";
import type { ListedTool } from "./advertise.js";
import type { ServerLink } from "./server-link.js";

/** A server that pages its tool list for ever is refused rather than followed. */
const MAX_TOOL_PAGES = 100;

export type CallOutcome =
  | { kind: "result"; result: CallToolResult }
  | { kind: "failed"; reason: string; timedOut: boolean; aborted: boolean };

export interface McpConnection {
  tools: ListedTool[];
  pid: number | null;
  /** Never throws: a call that gets no result says why. */
  call(tool: string, args: Record<string, unknown>, options: { timeoutMs: number; signal?: AbortSignal | undefined; meta?: Record<string, string> | undefined }): Promise<CallOutcome>;
  close(): Promise<void>;
}

interface ConnectOptions {
  /** How messages name the server: "MCP server 'fs' (agent.yaml: mcp_servers[0])". */
  where: string;
  timeoutMs: number;
  /** Aborting it (the engine was interrupted) gives up the start. */
  signal?: AbortSignal | undefined;
}

/**
 * Initializes the server and lists its tools, all within `timeoutMs`. Every way of failing — the
 * process exits, hangs, writes what is not JSON-RPC, answers with an error — stops the server and
 * is refused with a message naming it and what it wrote to stderr.
 */
export async function connect(link: ServerLink, options: ConnectOptions): Promise<McpConnection> {
  const client = new Client({ name: "delta-engine", version: ENGINE_VERSION }, { capabilities: {} });
  const deadline = new AbortController();
  let step = "initialize";
  const endsAt = Date.now() + options.timeoutMs;
  const timer = setTimeout(() => deadline.abort(new Error("timeout")), options.timeoutMs);
  link.onProtocolViolation(() => deadline.abort(new Error("protocol")));
  const unlink = follow(options.signal, deadline);
  const request = { signal: deadline.signal, timeout: options.timeoutMs };
  try {
    pausePoint("mcp-before-initialize");
    await client.connect(link.transport, request);
    step = "tools/list";
    const tools: ListedTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page += 1) {
      if (page === MAX_TOOL_PAGES) throw new Error(`the tool list went on past ${MAX_TOOL_PAGES} pages`);
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, request);
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    // Once running, a stray line is logged and skipped (as the SDK's own stdio client does), not fatal.
    link.onProtocolViolation(() => {});
    return connection(client, link, tools);
  } catch (err) {
    const why = await startFailure(err, step, link, { ...options, endsAt }, deadline.signal.reason);
    await link.close().catch(() => {});
    if (options.signal?.aborted) throw new InterruptedError(`Interrupted while starting ${options.where}`);
    throw new McpServerError(`${options.where} ${why}`, { cause: err });
  } finally {
    clearTimeout(timer);
    unlink();
  }
}

/**
 * Aborts `controller` when `signal` does, until the returned function is called. The SDK never
 * removes the abort listener of a finished request, so each request gets a signal of its own:
 * a run's signal would otherwise gather one listener per call, and cancel them all at Ctrl-C.
 */
function follow(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (signal === undefined) return () => {};
  if (signal.aborted) controller.abort(signal.reason);
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

async function startFailure(err: unknown, step: string, link: ServerLink, options: ConnectOptions & { endsAt: number }, deadlineReason: unknown): Promise<string> {
  const reason = deadlineReason instanceof Error ? deadlineReason.message : null;
  const closed = reason === null && err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
  // A server that stopped reading may not have exited yet: how it ended is worth the rest of its start's time.
  const facts = await link.diagnose(closed ? options.endsAt - Date.now() : undefined);
  if (reason === "protocol") return `broke the protocol while answering ${step}: ${facts}`;
  if (reason === "timeout") return `did not answer ${step} within ${options.timeoutMs} ms (its timeout_ms: fix the server, or raise timeout_ms if it is only slow to start); ${facts}`;
  if (closed) return `stopped before answering ${step}: ${facts}`;
  return `failed at ${step}: ${errorMessage(err)}; ${facts}`;
}

function connection(client: Client, link: ServerLink, tools: ListedTool[]): McpConnection {
  let closed: Promise<void> | null = null;
  return {
    tools,
    pid: link.pid,
    async call(tool, args, { timeoutMs, signal, meta }) {
      const controller = new AbortController();
      const unlink = follow(signal, controller);
      try {
        const result = (await client.callTool({ name: tool, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }, undefined, { timeout: timeoutMs, signal: controller.signal })) as CallToolResult;
        return { kind: "result", result };
      } catch (err) {
        if (signal?.aborted) return { kind: "failed", reason: "[interrupted; the request was cancelled]", timedOut: false, aborted: true };
        if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) {
          return { kind: "failed", reason: `[timed out after ${timeoutMs} ms; the request was cancelled]`, timedOut: true, aborted: false };
        }
        if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
          return { kind: "failed", reason: `The MCP server stopped: ${await link.diagnose()}`, timedOut: false, aborted: false };
        }
        if (client.transport === undefined) return { kind: "failed", reason: `The MCP server is not running: ${await link.diagnose()}`, timedOut: false, aborted: false };
        return { kind: "failed", reason: `The MCP server answered with an error: ${errorMessage(err)}`, timedOut: false, aborted: false };
      } finally {
        unlink();
      }
    },
    close() {
      closed ??= client.close().catch(() => link.close());
      return closed;
    },
  };
}
