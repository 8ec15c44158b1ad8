// How this process runs an exec tool's call for the loop: in the tool's box, through the process runner, its group in the owner record, under the run's trace.
import type { AgentPackage } from "../agent/load.js";
import type { ToolProcesses } from "../loop/ports.js";
import type { ToolGroup } from "../store/lease/owner-record.js";
import { invokeTool, type InvokeResult } from "../tools/invoke.js";
import type { RefusedConnections } from "../process/sandbox/host-proxy.js";
import type { OpenBox } from "./tool-box.js";

interface ToolPlace {
  runId: string;
  workDir: string;
  agent: Pick<AgentPackage, "home">;
  signal: AbortSignal;
  /** The box a call of this tool runs in (closed after the call), or null when the tool runs unboxed. */
  openToolBox(toolName: string): Promise<OpenBox | null>;
  /** The environment an unboxed tool starts from. */
  childEnv(): Record<string, string>;
  /** TRACEPARENT naming the span of the call whose ACTION_REQUEST has this seq (null for a journal with no trace). */
  traceParentFor(requestSeq: number): string | null;
  /** Notes in the owner record the process group of the tool just spawned, or (null) that it ended. */
  noteToolGroup(group: ToolGroup | null): void;
}

export function toolProcesses(place: ToolPlace): ToolProcesses {
  return {
    prepare: async (toolName) => {
      const box = await place.openToolBox(toolName);
      return {
        policy: box?.policy ?? null,
        run: async ({ argv, stdin, timeoutMs, requestSeq, env }) => {
          const traceParent = place.traceParentFor(requestSeq);
          let result: InvokeResult;
          let refused: RefusedConnections;
          try {
            result = await invokeTool({
              argv,
              stdin,
              cwd: place.workDir,
              env: { ...env, DELTA_RUN_ID: place.runId, DELTA_AGENT_HOME: place.agent.home, DELTA_CWD: place.workDir, ...(traceParent === null ? {} : { TRACEPARENT: traceParent }) },
              baseEnv: box === null ? place.childEnv() : box.env,
              timeoutMs,
              signal: place.signal,
              // In the owner record before anything else happens: a `continue` after this engine is killed ends what is left of it.
              onSpawn: (pgid) => place.noteToolGroup({ request_seq: requestSeq, pgid, started_at_unix: Date.now() }),
              sandbox: box?.box,
            });
          } finally {
            refused = box?.refused() ?? { targets: [], more: 0 };
            await box?.close();
          }
          place.noteToolGroup(null);
          return { result, refused: refused.targets, ...(refused.more > 0 ? { refusedMore: refused.more } : {}) };
        },
      };
    },
  };
}
