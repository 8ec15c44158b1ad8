// Every surface that reads a status knows DEFERRED: stream-json's last lines, list-runs' JSON and text, prune (keeps it), the HTML report, an OTLP export, and `delta mcp serve`'s run, status and result tools.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { fault, reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, modelEnv, setUpE2e, writeAgent } from "./harness.js";

const e2e = setUpE2e("delta-deferred-surfaces-");
const { root } = e2e;
let agent: string;
let server: MockLlm;
let ws: string;
/** What the deferred run "waits" said in its RunResult. */
let deferred: { reason: string; resume_after: string | null; message: string };

const LIMITED = () => fault.status(429, { retryAfter: "3600", message: "Rate limit reached for requests" });

beforeAll(async () => {
  agent = writeAgent(root);
  // Tasks starting "waits" are rate limited for an hour; any other is answered.
  server = await e2e.serve((request) => (taskOf(request).startsWith("waits") ? LIMITED() : reply.text("done")));
  ws = join(root, "ws");
  const waits = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "waits", "--format", "json", "waits"], { env: modelEnv(server.baseUrl) });
  expect(waits.exitCode, waits.stderr).toBe(75);
  deferred = (JSON.parse(waits.stdout) as { deferred: typeof deferred }).deferred;
  expect(deferred.reason).toBe("RATE_LIMITED");
  const done = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "done", "--format", "json", "finish"], { env: modelEnv(server.baseUrl) });
  expect(done.exitCode, done.stderr).toBe(0);
});

describe("the command line", () => {
  it("stream-json: the journal's ENGINE_END carries the deferral, then the RunResult line says DEFERRED with it", async () => {
    const streamed = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "waits-streamed", "--format", "stream-json", "waits streamed"], { env: modelEnv(server.baseUrl) });
    expect(streamed.exitCode, streamed.stderr).toBe(75);
    const lines = streamed.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const end = lines.at(-2) as EventOf<"ENGINE_END">;
    const result = lines.at(-1)!;
    expect(end).toMatchObject({ type: "ENGINE_END", status: "DEFERRED", deferred: { reason: "RATE_LIMITED" } });
    expect(result).toMatchObject({ status: "DEFERRED", run_id: "waits-streamed", deferred: end.deferred });
  });

  it("list-runs: JSON carries the deferral; text says the reason and when it is due; --status DEFERRED filters", async () => {
    const json = await delta(["list-runs", "-w", ws, "--format", "json"]);
    const runs = JSON.parse(json.stdout) as { run_id: string; status: string; deferred: unknown }[];
    expect(runs.find((run) => run.run_id === "waits")).toMatchObject({ status: "DEFERRED", deferred });
    expect(runs.find((run) => run.run_id === "done")).toMatchObject({ status: "COMPLETED", deferred: null });
    const text = await delta(["list-runs", "-w", ws]);
    expect(text.stdout).toContain(`DEFERRED (RATE_LIMITED, due ${deferred.resume_after})`);
    const only = await delta(["list-runs", "-w", ws, "--status", "DEFERRED", "--format", "raw"]);
    expect(only.stdout.split("\n").filter(Boolean).sort()).toEqual(["waits", "waits-streamed"]);
  });

  it("prune never removes a deferred run: --status DEFERRED is refused (126), and pruning everything else leaves it", async () => {
    const refused = await delta(["prune", "-w", ws, "--status", "DEFERRED", "--keep", "0", "--yes"]);
    expect(refused.exitCode).toBe(126);
    expect(refused.stderr).toContain("DEFERRED run (one that waits to go on) is never removed");
    const pruned = await delta(["prune", "-w", ws, "--keep", "0", "--yes"]);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    expect(existsSync(join(ws, ".delta", "done"))).toBe(false);
    expect(existsSync(join(ws, ".delta", "waits", "journal.jsonl"))).toBe(true);
  });

  it("the HTML report shows what the run waits for, in its outcome and in the workspace's table", async () => {
    const page = join(root, "waits.html");
    expect((await delta(["report", "waits", "-w", ws, "-o", page])).exitCode).toBe(0);
    const html = readFileSync(page, "utf8");
    expect(html).toContain('class="deferred"><b>RATE_LIMITED</b>');
    const table = join(root, "runs.html");
    expect((await delta(["report", "-w", ws, "-o", table])).exitCode).toBe(0);
    expect(readFileSync(table, "utf8")).toContain("deferred: RATE_LIMITED");
  });

  it("an OTLP export: the run's span names the reason and resume_after, and is not an error", async () => {
    const exported = await delta(["export", "waits", "-w", ws, "--format", "otlp-json"]);
    expect(exported.exitCode, exported.stderr).toBe(0);
    type Span = { name: string; attributes: { key: string; value: { stringValue?: string } }[]; status?: { code?: number } };
    const spans = (JSON.parse(exported.stdout) as { resourceSpans: { scopeSpans: { spans: Span[] }[] }[] }).resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
    const withReason = spans.filter((span) => span.attributes.some((a) => a.key === "delta.deferred.reason"));
    expect(withReason).toHaveLength(1);
    const attribute = (key: string) => withReason[0]!.attributes.find((a) => a.key === key)?.value.stringValue;
    expect(attribute("delta.deferred.reason")).toBe("RATE_LIMITED");
    expect(attribute("delta.deferred.resume_after")).toBe(deferred.resume_after);
    expect(attribute("delta.run.status")).toBe("DEFERRED");
    expect(withReason[0]!.status?.code ?? 0).not.toBe(2);
  });
});

describe("delta mcp serve", () => {
  it("run, status and result give a deferred run's status and what it waits for", async () => {
    const serveWs = join(root, "ws-serve");
    const client = new Client({ name: "test-client", version: "1.0.0" });
    const env = { ...process.env, ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl) } as Record<string, string>;
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [DELTA_BIN, "mcp", "serve", "--agent", agent, "-w", serveWs], env, stderr: "pipe" }));
    try {
      type Answer = { isError?: boolean; structuredContent?: Record<string, unknown> };
      const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 })) as Answer;
      const ran = await call("run", { task: "waits over mcp", run_id: "served" });
      expect(ran.structuredContent).toMatchObject({ run_id: "served", status: "DEFERRED", deferred: { reason: "RATE_LIMITED" } });
      const said = (ran.structuredContent as { deferred: typeof deferred }).deferred;
      expect((await call("status", { run_id: "served" })).structuredContent).toMatchObject({ status: "DEFERRED", deferred: said });
      expect((await call("result", { run_id: "served" })).structuredContent).toMatchObject({ status: "DEFERRED", deferred: said });
    } finally {
      await client.close();
    }
  });
});
