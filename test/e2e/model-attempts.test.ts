// Every model call is on the record: each failed attempt (status or network error, the server's words redacted and bounded, the wait) and each THOUGHT's start, duration and attempts.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EventOf, JournalEvent } from "../../src/journal/events.js";
import { fault, reply, startMockLlm, type Step } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, writeAgent, setUpE2e } from "./harness.js";

const KEY = modelEnv("http://unused").DELTA_API_KEY!;

const { root } = setUpE2e("delta-attempts-");

async function runWith(name: string, steps: Step[]): Promise<{ exitCode: number | undefined; stderr: string; ws: string; events: JournalEvent[] }> {
  const server = await startMockLlm(steps);
  const agent = writeAgent(root, { tools: `tools:\n  - name: echo\n    exec: "echo \${text}"\n` }, `agent-${name}`);
  const ws = join(root, `ws-${name}`);
  try {
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", name, "-m", "go"], { env: modelEnv(server.baseUrl) });
    return { exitCode: result.exitCode, stderr: result.stderr, ws, events: readEvents(ws, name) };
  } finally {
    await server.close();
  }
}

const failedAttempts = (events: JournalEvent[]): EventOf<"LLM_ATTEMPT_FAILED">[] => events.filter((event): event is EventOf<"LLM_ATTEMPT_FAILED"> => event.type === "LLM_ATTEMPT_FAILED");
const thoughts = (events: JournalEvent[]): EventOf<"THOUGHT">[] => events.filter((event): event is EventOf<"THOUGHT"> => event.type === "THOUGHT");

describe.concurrent("the journal records every model call", () => {
  it("a 2nd call that fails twice and then succeeds: both failed attempts with status, words and wait, and the THOUGHT's start, duration and attempts", async () => {
    const { exitCode, stderr, events } = await runWith("retried", [
      reply.toolCalls([{ name: "echo", arguments: { text: "hi" } }]),
      fault.status(500, { message: `upstream overloaded (key ${KEY})` }),
      fault.status(503, { retryAfterMs: 40, message: "try again soon" }),
      reply.text("done"),
    ]);
    expect(exitCode, stderr).toBe(0);
    const failed = failedAttempts(events);
    expect(failed).toHaveLength(2);
    expect(failed[0]).toMatchObject({ iteration: 2, attempt: 1, http_status: 500, reason: "HTTP 500", server_message: "upstream overloaded (key [REDACTED])" });
    expect(failed[1]).toMatchObject({ iteration: 2, attempt: 2, http_status: 503, reason: "HTTP 503", server_message: "try again soon", retry_in_ms: 40 });
    // The computed backoff of the first retry: DELTA_RETRY_BASE_MS=5 with ±20% jitter.
    expect(failed[0]!.retry_in_ms).toBeGreaterThanOrEqual(4);
    expect(failed[0]!.retry_in_ms).toBeLessThanOrEqual(6);
    expect(JSON.stringify(events)).not.toContain(KEY);

    const [first, second] = thoughts(events);
    expect(first).toMatchObject({ iteration: 1, attempts: 1 });
    expect(second).toMatchObject({ iteration: 2, attempts: 3, content: "done" });
    // Journaled in order: the failed attempts come between the first iteration's result and the THOUGHT they belong to.
    const types = events.map((event) => event.type);
    expect(types.slice(types.indexOf("ACTION_RESULT"))).toEqual(["ACTION_RESULT", "LLM_ATTEMPT_FAILED", "LLM_ATTEMPT_FAILED", "THOUGHT", "ENGINE_END"]);
    // The call starts with its first attempt and lasts through both failures, both waits and the answer.
    const callStart = Date.parse(second!.started_at!);
    expect(callStart).toBeLessThanOrEqual(Date.parse(failed[0]!.started_at));
    expect(Date.parse(failed[0]!.started_at)).toBeLessThan(Date.parse(failed[1]!.started_at));
    expect(Date.parse(failed[1]!.started_at)).toBeGreaterThanOrEqual(Date.parse(failed[0]!.started_at) + failed[0]!.duration_ms + failed[0]!.retry_in_ms!);
    const failedTime = failed.reduce((sum, attempt) => sum + attempt.duration_ms + attempt.retry_in_ms!, 0);
    expect(second!.duration_ms).toBeGreaterThanOrEqual(failedTime);
    expect(callStart + second!.duration_ms!).toBeLessThanOrEqual(Date.parse(second!.timestamp) + 1);
  });

  it("a call that never succeeds: every attempt journaled, the last with no wait, before the LLM_ERROR", async () => {
    const { exitCode, events } = await runWith("exhausted", [fault.status(500), fault.status(500), fault.status(500), fault.status(502, { message: "x".repeat(5000) })]);
    expect(exitCode).toBe(1);
    const failed = failedAttempts(events);
    expect(failed.map((attempt) => [attempt.attempt, attempt.http_status, attempt.retry_in_ms === null])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
      [4, 502, true],
    ]);
    // The server's words are bounded.
    expect(failed[3]!.server_message!.length).toBeLessThanOrEqual(501);
    const types = events.map((event) => event.type);
    expect(types.indexOf("ERROR")).toBeGreaterThan(types.lastIndexOf("LLM_ATTEMPT_FAILED"));
    expect(thoughts(events)).toHaveLength(0);
  });

  it("a network error is journaled with its reason and no HTTP status", async () => {
    const { exitCode, events } = await runWith("reset", [fault.reset(), reply.text("whole")]);
    expect(exitCode).toBe(0);
    const [failed] = failedAttempts(events);
    expect(failed).toBeDefined();
    expect(failed!.http_status).toBeUndefined();
    expect(failed!.reason).toMatch(/connection (reset|closed)/);
    expect(failed!.retry_in_ms).not.toBeNull();
  });

  it("`show` prints the failed attempts in its timeline", async () => {
    const { ws } = await runWith("shown", [fault.status(503, { message: "busy right now" }), reply.text("fine")]);
    const shown = await delta(["show", "shown", "-w", ws]);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/\[1\] +model attempt 1 failed · HTTP 503 "busy right now" · \d+ ms · retry in \d+ ms/);
    expect(shown.stdout).toMatch(/\[1\] +mock-model · \d+ ms \(attempt 2\)/);
  });
});
