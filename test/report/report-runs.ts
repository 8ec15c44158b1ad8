// Three runs and their HTML reports, made once for the report tests: a run with a failing tool and hostile output, one that completes at once, one that fails.
import { join } from "node:path";
import { expect } from "vitest";
import { fault, reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, tempDir, writeAgent } from "../e2e/harness.js";

/** Markup a tool prints and the model repeats: the report must show it as text and run none of it. */
export const HOSTILE = `</script><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;

export interface ReportRuns {
  root: string;
  /** The workspace holding report-1 (completed, 3 iterations), report-2 (completed) and report-3 (failed). */
  ws: string;
  runFile: string;
  workspaceFile: string;
}

/** Runs the three runs against a scripted model and writes report-1's report and the workspace's. */
export async function makeReportRuns(): Promise<ReportRuns> {
  const tools = `tools:
  - name: echo
    exec: "echo \${text}"
  - name: fail
    shell: "echo failing >&2; exit 3"
`;
  const root = tempDir("delta-report-");
  const agent = writeAgent(root, { tools });
  const ws = join(root, "ws");
  const server = await startMockLlm([
    // run "report-1": three iterations, a tool that fails, and a tool whose output is hostile markup.
    reply.toolCalls([{ name: "echo", arguments: { text: "first" } }, { name: "fail", arguments: {} }], "Two tools.", { usage: { prompt_tokens: 100, completion_tokens: 10 } }),
    reply.toolCalls([{ name: "echo", arguments: { text: HOSTILE } }], null, { usage: { prompt_tokens: 200, completion_tokens: 20 } }),
    reply.text(`Done. ${HOSTILE}`, { usage: { prompt_tokens: 300, completion_tokens: 30 } }),
    // run "report-2": completes at once; run "report-3": fails.
    reply.text("ok"),
    fault.status(400, { message: "refused on purpose" }),
  ]);
  try {
    for (const [id, expected] of [["report-1", 0], ["report-2", 0], ["report-3", 1]] as const) {
      const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", id, "-m", `task of ${id}`], { env: modelEnv(server.baseUrl) });
      expect(run.exitCode, run.stderr).toBe(expected);
    }
  } finally {
    await server.close();
  }
  const runFile = join(root, "run.html");
  const workspaceFile = join(root, "workspace.html");
  for (const args of [["report", "report-1", "-w", ws, "-o", runFile], ["report", "-w", ws, "-o", workspaceFile]]) {
    const made = await delta(args);
    expect(made.exitCode, made.stderr).toBe(0);
    expect(made.stderr).toMatch(/^Wrote /);
  }
  return { root, ws, runFile, workspaceFile };
}
