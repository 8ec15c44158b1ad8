// What came of a tool call that ran (an exec tool's or an MCP server's), as ACTION_RESULT records it.
import type { ActionStatus } from "../journal/events.js";

export interface ActionFacts {
  status: ActionStatus;
  observation: string;
  exitCode: number | null;
  durationMs: number;
  /** Lines of the whole output, for a tool whose output is counted in lines. */
  outputLines?: number;
}
