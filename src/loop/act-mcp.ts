// One MCP tool call: sent to its server, its result turned into the observation, and the whole of it for io/tool_executions/.
import type { ToolCall } from "../journal/events.js";
import type { McpTool } from "../tools/mcp/advertise.js";
import { resultText } from "../tools/mcp/result-text.js";
import { boundText, DEFAULT_MAX_OBSERVATION_BYTES } from "../tools/output-bound.js";
import type { ActionFacts } from "./action-facts.js";
import type { ActionKey } from "./action-key.js";
import type { CatalogueEntry, LoopPorts } from "./ports.js";


/**
 * The call's identity in the tools/call request's `_meta`, under the engine's own prefix (MCP reserves only prefixes
 * whose second label is `modelcontextprotocol` or `mcp`): a server reads `params._meta["delta/idempotency_key"]`.
 */
function mcpMeta(key: ActionKey): Record<string, string> {
  return { "delta/idempotency_key": key.key, "delta/action_id": key.actionId };
}

/** What ACTION_REQUEST records as the command of an MCP call: no argv runs, the server is asked. */
export function mcpCommand(tool: McpTool): string[] {
  return ["mcp", tool.server, tool.tool];
}

/**
 * The model sees the result's text content, other content described, bounded as any tool's output;
 * a result the server marks `isError`, a protocol error, a timeout or a stopped server is ERROR.
 * `record`: the call and its whole result, for io/tool_executions/.
 */
export async function callMcpTool(ports: LoopPorts, call: ToolCall, entry: Extract<CatalogueEntry, { kind: "mcp" }>, args: Record<string, unknown>, key: ActionKey): Promise<{ facts: ActionFacts; record: Record<string, unknown> }> {
  const { tool } = entry;
  const outcome = await entry.call(tool, args, { signal: ports.signal, meta: mcpMeta(key) });
  const facts: ActionFacts =
    outcome.kind === "result"
      ? { status: outcome.result.isError ? "ERROR" : "SUCCESS", observation: boundedText(resultText(outcome.result)), exitCode: null, durationMs: outcome.durationMs }
      : { status: "ERROR", observation: outcome.reason, exitCode: null, durationMs: outcome.durationMs };
  ports.log.log(`tool ${call.name}: MCP server '${tool.server}' tool '${tool.tool}' → ${facts.status}${outcome.kind === "failed" ? ` (${outcome.reason})` : ""} in ${outcome.durationMs} ms`);
  const record = {
    command: mcpCommand(tool),
    mcp_server: tool.server,
    mcp_tool: tool.tool,
    result: outcome.kind === "result" ? outcome.result : null,
    error: outcome.kind === "failed" ? outcome.reason : null,
    timed_out: outcome.kind === "failed" && outcome.timedOut,
    aborted: outcome.kind === "failed" && outcome.aborted,
    duration_ms: outcome.durationMs,
  };
  return { facts, record };
}

function boundedText(text: string): string {
  return text === "" ? "(no output)" : boundText(text, DEFAULT_MAX_OBSERVATION_BYTES);
}
