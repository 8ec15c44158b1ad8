// End to end, what only the binary shows: a run whose ENGINE_END is gone is finished from its journaled answer with no model call; after kill -9 (and a torn line) an idempotent tool runs again with the same key, in its environment, its hooks' and an MCP server's _meta, and the journal's hash chain still holds.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { filesystemServer, logged, loggedRequests, stdioServerYaml } from "../support/mcp-servers.js";
import { reply, toolResultsOf, type MockLlm } from "../support/mock-llm.js";
import { groupEmptiesSoon, pidFrom } from "../support/processes.js";
import { CRASH_TRACE, delta, modelEnv, readEvents, runDir, spawnDelta, toolGroupNoted, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-exactly-once-");
let server: MockLlm;

/** Cuts the journal's last line, which must be the ENGINE_END: what a crash between the answer and the end leaves. */
function cutEngineEnd(ws: string, runId: string): void {
  const path = join(runDir(ws, runId), "journal.jsonl");
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  expect(JSON.parse(lines.at(-1)!)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED" });
  writeFileSync(path, `${lines.slice(0, -1).join("\n")}\n`);
}

describe("a final answer whose ENGINE_END was never written", () => {
  it("is finished by run --if-exists resume and by continue from the journal: no model call, its schema checked, on_run_end run", async () => {
    server = await serve([reply.toolCalls([{ name: "echo", arguments: { text: "item 7" } }]), reply.text('{"ok": true, "item": 7}')]);
    const agent = writeAgent(root, {
      agentYaml: 'name: once\nllm:\n  model: mock-model\ntools:\n  - name: echo\n    exec: "echo ${text}"\noutput_schema:\n  type: object\n  required: [ok]\n  properties:\n    ok: { type: boolean }\n',
      hooksYaml: JSON.stringify({ on_run_end: { command: ["sh", "-c", "cat >> run_end.jsonl; echo >> run_end.jsonl"] } }),
    }, "agent-answer");
    const ws = join(root, "ws-answer");
    const task = ["--run-id", "r1", "-w", ws, "--format", "json"];
    const first = await delta(["run", "--agent", agent, ...task, "--if-exists", "resume", "-m", "process item 7"], { env: modelEnv(server.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(server.requests).toHaveLength(2);

    cutEngineEnd(ws, "r1");
    const resumed = await delta(["run", "--agent", agent, ...task, "--if-exists", "resume", "-m", "process item 7"], { env: modelEnv(server.baseUrl) });
    expect(resumed.stderr).not.toMatch(CRASH_TRACE);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "COMPLETED", result: { ok: true, item: 7 } });
    expect(resumed.stderr).toContain("the model's final answer was journaled before the engine stopped; the run ends on it (no model request)");

    cutEngineEnd(ws, "r1");
    const continued = await delta(["continue", "--run-id", "r1", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout)).toMatchObject({ status: "COMPLETED", result: { ok: true, item: 7 } });

    // Asked once for the answer, never again; the journal holds one answer and ends on it.
    expect(server.requests).toHaveLength(2);
    const events = readEvents(ws, "r1");
    expect(events.filter((event) => event.type === "THOUGHT")).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: "ENGINE_END", status: "COMPLETED", final_iteration: 2 });
    const runEnds = readFileSync(join(ws, "run_end.jsonl"), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { payload: { status: string } });
    expect(runEnds.map((end) => end.payload.status)).toEqual(["COMPLETED", "COMPLETED", "COMPLETED"]);
  });
});

describe("a tool call that kill -9 left in doubt", () => {
  it("runs again on continue with the same key when the tool is idempotent, in its environment and its hooks'; an MCP call carries its key in _meta", async () => {
    server = await serve((request) =>
      toolResultsOf(request).length === 0
        ? reply.toolCalls([{ name: "fs__write_file", arguments: { path: "order.txt", content: "order 7\n" }, id: "call_fs" }, { name: "charge", arguments: { order: "7" }, id: "call_charge" }])
        : reply.text(`done: ${toolResultsOf(request).join(" | ")}`),
    );
    const mcpLog = join(root, "mcp-requests.log");
    const ws = join(root, "ws-kill");
    // The first attempt records its key, marks the order charged and hangs until the engine is killed; any later attempt finds it charged, as an API would by the key.
    const charge = `echo "$DELTA_IDEMPOTENCY_KEY" >> keys.txt; if [ -e charged-\${order} ]; then echo "charged once"; else touch charged-\${order}; echo $$ > charge.pid; sleep 300; fi`;
    const agent = writeAgent(root, {
      agentYaml: `name: payer\nllm:\n  model: mock-model\ntools:\n  - name: charge\n    shell: ${JSON.stringify(charge)}\n    effects: idempotent\nmcp_servers:\n${stdioServerYaml("fs", logged(mcpLog, filesystemServer("${CWD}")))}`,
      hooksYaml: JSON.stringify({ pre_tool_execution: { command: ["sh", "-c", 'echo "$TOOL_NAME $DELTA_ACTION_ID $DELTA_IDEMPOTENCY_KEY" >> hook-keys.txt'] } }),
    }, "agent-kill");

    const engine = spawnDelta(["run", "--agent", agent, "-w", ws, "--run-id", "r2", "-m", "charge order 7"], { env: modelEnv(server.baseUrl) });
    const leader = await pidFrom(join(ws, "charge.pid"), 30_000);
    await toolGroupNoted(ws, "r2");
    engine.kill("SIGKILL");
    await engine;
    // A crash mid-write leaves a torn line too; the continue cuts it.
    appendFileSync(join(runDir(ws, "r2"), "journal.jsonl"), '{"seq":99,"timestamp":"2026-');

    const continued = await delta(["continue", "--run-id", "r2", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(continued.exitCode, continued.stderr).toBe(0);
    expect(await groupEmptiesSoon(leader)).toBe(true);
    expect(continued.stderr).toContain("charge: no result was recorded before the engine stopped; it is idempotent, so it runs again with the same key (r2:1:call_charge)");
    expect(JSON.parse(continued.stdout).result).toBe("done: Successfully wrote to order.txt | charged once\n");

    // The same key on both attempts, for the tool and for the hook about it.
    expect(readFileSync(join(ws, "keys.txt"), "utf8")).toBe("r2:1:call_charge\nr2:1:call_charge\n");
    expect(readFileSync(join(ws, "hook-keys.txt"), "utf8")).toBe("fs__write_file call_fs r2:1:call_fs\ncharge call_charge r2:1:call_charge\ncharge call_charge r2:1:call_charge\n");
    const requests = readEvents(ws, "r2").filter((event): event is EventOf<"ACTION_REQUEST"> => event.type === "ACTION_REQUEST" && event.tool_name === "charge");
    expect(requests.map((event) => event.rerun_of)).toEqual([undefined, requests[0]!.seq]);
    // The MCP server got the key in the request itself, under the engine's prefix.
    const calls = loggedRequests(mcpLog).filter((entry) => entry.method === "tools/call");
    expect(calls.map((entry) => entry.meta)).toEqual([{ "delta/idempotency_key": "r2:1:call_fs", "delta/action_id": "call_fs" }]);

    // The torn line cut, the janitor's end and the re-run appended: the hash chain holds from the first line to the last.
    expect(continued.stderr).toContain("cut off a torn last line");
    const verified = await delta(["verify", "r2", "-w", ws, "--format", "json"]);
    expect(verified.exitCode, verified.stdout).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ status: "intact", chained_from: 1, problem_count: 0 });
  });
});
