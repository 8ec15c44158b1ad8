// What the engine is doing right now, for a live status line: the model thinking (and its text as it streams), a tool, MCP servers starting.

export type Activity =
  | { kind: "model"; iteration: number; model: string }
  | { kind: "model-text"; iteration: number; text: string }
  | { kind: "tool"; iteration: number; tool: string }
  | { kind: "mcp-start"; servers: string[] }
  | { kind: "idle" };

export type ActivitySink = (activity: Activity) => void;

/** For callers that show nothing. */
export const NO_ACTIVITY: ActivitySink = () => {};
