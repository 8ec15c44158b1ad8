// One MCP server session of `delta mcp serve`: the SDK's Server answering tools/list and tools/call with the five run tools, asking ask_human questions by elicitation when the client can.
import { DeltaError } from "../errors.js";
import { ENGINE_VERSION } from "../engine-version.js";
import type { ChildRuns } from "./child-runs.js";
import { elicitAnswer } from "./elicit-answer.js";
import { CallToolRequestSchema, ElicitResultSchema, ListToolsRequestSchema, Server, type CallToolResult } from "./sdk.js";
import { ToolArgumentError, callTool, toolList } from "./tools.js";

/** How long a question put to the client's user may stay unanswered before the run is left WAITING_FOR_INPUT. */
const ELICIT_TIMEOUT_MS = 600_000;

export interface SessionOptions {
  runs: ChildRuns;
  workDir: string;
  agentName: string;
  /** The client this session serves: its runs are interrupted when it goes. */
  owner: () => string;
}

export function createSession(options: SessionOptions): Server {
  const server = new Server(
    { name: `delta-${options.agentName}`, version: ENGINE_VERSION },
    {
      capabilities: { tools: {} },
      instructions: `Runs of the delta agent '${options.agentName}' in ${options.workDir}. Start one with run; poll a long one with status and result.`,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolList() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const token = request.params._meta?.progressToken;
    const progress =
      token === undefined
        ? undefined
        : (iteration: number): void => {
            void extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: iteration, message: `iteration ${iteration}` } }).catch(() => {});
          };
    try {
      const result = await callTool(request.params.name, request.params.arguments, {
        runs: options.runs,
        workDir: options.workDir,
        owner: options.owner(),
        signal: extra.signal,
        progress,
        // Only a client that declared form elicitation is asked; any other sees WAITING_FOR_INPUT and uses the answer tool.
        ask:
          server.getClientCapabilities()?.elicitation?.form === undefined
            ? undefined
            : (question) =>
                elicitAnswer(question, (params) =>
                  extra.sendRequest({ method: "elicitation/create", params }, ElicitResultSchema, { signal: extra.signal, timeout: ELICIT_TIMEOUT_MS }),
                ),
      });
      return { content: [{ type: "text", text: JSON.stringify(result, null, 2) }], structuredContent: result };
    } catch (err) {
      if (err instanceof ToolArgumentError || err instanceof DeltaError) return { content: [{ type: "text", text: err.message }], isError: true };
      throw err;
    }
  });
  return server;
}
