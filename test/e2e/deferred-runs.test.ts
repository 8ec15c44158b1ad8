// DEFERRED on the command line: a limit or a quota ends a run with exit 75 and its deferral in the RunResult, ENGINE_END and metadata; list-runs --due and continue --due take it once its time has come, and not before.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { fault, reply, startMockLlm, taskOf, type MockLlm, type RecordedRequest, type Step } from "../support/mock-llm.js";
import { recordedStep } from "../support/recorded.js";
import { delta, modelEnv, readEvents, readMetadataFile, setUpE2e, writeAgent } from "./harness.js";

const { root } = setUpE2e("delta-deferred-");
let agent: string;
beforeAll(() => {
  // A limit asking for more than 100 ms is waited out of the process.
  agent = writeAgent(root, { agentYaml: 'name: deferring\nllm:\n  model: mock-model\n  max_retry_wait_ms: 100\ntools:\n  - name: echo\n    exec: "echo ${text}"\n' });
});

/** A model that answers each request by the run's task: the step `byTask[task]` gives for the n-th request of that task. */
async function modelByTask(byTask: Record<string, Step[]>): Promise<MockLlm> {
  const seen = new Map<string, number>();
  return startMockLlm((request: RecordedRequest) => {
    const task = taskOf(request);
    const index = seen.get(task) ?? 0;
    seen.set(task, index + 1);
    return byTask[task]?.[index] ?? reply.text(`no step ${index} for ${task}`);
  });
}

async function run(server: MockLlm, ws: string, runId: string, task: string, extra: string[] = []) {
  const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", runId, "--format", "json", ...extra, task], { env: modelEnv(server.baseUrl) });
  return { ...result, json: JSON.parse(result.stdout) as Record<string, unknown> & { deferred?: { reason: string; resume_after: string | null; message: string } } };
}

const endOf = (ws: string, runId: string): EventOf<"ENGINE_END"> => readEvents(ws, runId).filter((event): event is EventOf<"ENGINE_END"> => event.type === "ENGINE_END").at(-1)!;

describe("each reason ends the run with exit 75 and its fields", () => {
  it("RATE_LIMITED from Retry-After: 3600, after a tool call: resume_after an hour on, in the RunResult, ENGINE_END and metadata; nothing more sent", async () => {
    const server = await modelByTask({ slow: [reply.toolCalls([{ name: "echo", arguments: { text: "kept" } }]), fault.status(429, { retryAfter: "3600", message: "Rate limit reached for requests" })] });
    const ws = join(root, "ws-retry-after");
    try {
      const before = Date.now();
      const result = await run(server, ws, "slow", "slow");
      expect(result.exitCode, result.stderr).toBe(75);
      expect(result.json).toMatchObject({ status: "DEFERRED", deferred: { reason: "RATE_LIMITED" } });
      expect(result.json.error).toBeUndefined();
      const resumeAt = Date.parse(result.json.deferred!.resume_after!);
      expect(resumeAt).toBeGreaterThanOrEqual(before + 3_600_000);
      expect(resumeAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
      expect(result.json.deferred!.message).toContain("asks to wait 3600 s (retry-after), longer than llm.max_retry_wait_ms (100 ms)");
      expect(server.requests).toHaveLength(2);
      expect(endOf(ws, "slow")).toMatchObject({ status: "DEFERRED", deferred: result.json.deferred });
      expect(readMetadataFile(ws, "slow")).toMatchObject({ status: "DEFERRED", deferred: result.json.deferred, error: null });
      expect(readEvents(ws, "slow").filter((event) => event.type === "ACTION_RESULT")).toHaveLength(1);
      expect(result.stderr).toContain("delta continue --due -w");
      // Resumable, not due: list-runs --resumable shows it, --due does not, and continue --due leaves it alone.
      const resumable = await delta(["list-runs", "-w", ws, "--resumable", "--format", "raw"]);
      expect(resumable.stdout).toBe("slow\n");
      const due = await delta(["list-runs", "-w", ws, "--due", "--format", "raw"]);
      expect(due.stdout).toBe("");
      const none = await delta(["continue", "--due", "-w", ws], { env: modelEnv(server.baseUrl) });
      expect(none.exitCode, none.stderr).toBe(0);
      expect(none.stderr).toContain("No deferred run is due.");
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it("RATE_LIMITED from OpenAI's reset headers when no Retry-After comes: x-ratelimit-reset-requests of the limit that ran out", async () => {
    const limited = reply.raw(429, { error: { message: "Rate limit reached for requests", type: "requests", code: "rate_limit_exceeded" } }, { "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "7m12s", "x-ratelimit-remaining-tokens": "5000", "x-ratelimit-reset-tokens": "20s" });
    const server = await modelByTask({ headers: [limited] });
    const ws = join(root, "ws-reset-headers");
    try {
      const before = Date.now();
      const result = await run(server, ws, "headers", "headers");
      expect(result.exitCode, result.stderr).toBe(75);
      expect(result.json.deferred).toMatchObject({ reason: "RATE_LIMITED" });
      expect(Date.parse(result.json.deferred!.resume_after!)).toBeGreaterThanOrEqual(before + 432_000);
      expect(result.json.deferred!.message).toContain("(x-ratelimit-reset-requests)");
    } finally {
      await server.close();
    }
  });

  it("QUOTA_EXHAUSTED from the recorded OpenAI insufficient_quota 429: not retried, its time unknown, so due at once", async () => {
    const server = await modelByTask({ broke: [recordedStep("openai-chat/error-insufficient-quota-429")] });
    const ws = join(root, "ws-quota");
    try {
      const result = await run(server, ws, "broke", "broke");
      expect(result.exitCode, result.stderr).toBe(75);
      expect(result.json.deferred).toMatchObject({ reason: "QUOTA_EXHAUSTED", resume_after: null });
      expect(server.requests).toHaveLength(1);
      expect((await delta(["list-runs", "-w", ws, "--due", "--format", "raw"])).stdout).toBe("broke\n");
    } finally {
      await server.close();
    }
  });
});

describe("continue --due", () => {
  it("resumes a deferred run once its time has come and not before: the one due an hour on is left alone", async () => {
    const server = await modelByTask({
      soon: [fault.status(429, { retryAfterMs: 300, message: "slow down" }), reply.text("done soon")],
      later: [fault.status(429, { retryAfter: "3600", message: "slow down" })],
    });
    const ws = join(root, "ws-due");
    try {
      expect((await run(server, ws, "soon", "soon")).exitCode).toBe(75);
      expect((await run(server, ws, "later", "later")).exitCode).toBe(75);
      // Its resume_after is 300 ms after its deferral: wait for the moment list-runs sees it due.
      const listed = async () => (await delta(["list-runs", "-w", ws, "--due", "--format", "raw"])).stdout;
      const deadline = Date.now() + 30_000;
      while ((await listed()) !== "soon\n") {
        if (Date.now() > deadline) throw new Error("the run due 300 ms after its deferral was never listed as due");
      }
      const requestsBefore = server.requests.length;
      const resumed = await delta(["continue", "--due", "-w", ws, "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const lines = resumed.stdout.trim().split("\n").map((line) => JSON.parse(line) as { run_id: string; status: string; result?: unknown });
      expect(lines).toEqual([expect.objectContaining({ run_id: "soon", status: "COMPLETED", result: "done soon" })]);
      expect(server.requests.length).toBe(requestsBefore + 1);
      expect(taskOf(server.requests.at(-1)!)).toBe("soon");
      expect(endOf(ws, "later").status).toBe("DEFERRED");
    } finally {
      await server.close();
    }
  });

  it("-j 2 runs them at once, one RunResult per line, and exits with the worst code: 75 over 0", async () => {
    const server = await modelByTask({
      first: [recordedStep("openai-chat/error-insufficient-quota-429"), reply.text("paid up")],
      second: Array.from({ length: 3 }, () => recordedStep("openai-chat/error-insufficient-quota-429")),
    });
    const ws = join(root, "ws-jobs");
    try {
      expect((await run(server, ws, "first", "first")).exitCode).toBe(75);
      expect((await run(server, ws, "second", "second")).exitCode).toBe(75);
      const resumed = await delta(["continue", "--due", "-w", ws, "-j", "2", "--format", "json"], { env: modelEnv(server.baseUrl) });
      expect(resumed.exitCode, resumed.stderr).toBe(75);
      const byRun = Object.fromEntries(resumed.stdout.trim().split("\n").map((line) => JSON.parse(line) as { run_id: string; status: string }).map((result) => [result.run_id, result.status]));
      expect(byRun).toEqual({ first: "COMPLETED", second: "DEFERRED" });
      // Each child's stderr reaches the person, each line named by its run.
      expect(resumed.stderr).toMatch(/^\[second\] /m);
      // Text: one line per run, with what it waits for.
      const again = await delta(["continue", "--due", "-w", ws], { env: modelEnv(server.baseUrl) });
      expect(again.exitCode).toBe(75);
      expect(again.stdout).toMatch(/^second {2}DEFERRED {2}exit 75 {2}.* {2}QUOTA_EXHAUSTED$/m);
    } finally {
      await server.close();
    }
  });

  it("refuses a run id or a message beside --due, and -j without it (126)", async () => {
    for (const args of [["continue", "--due", "--run-id", "x", "-w", root], ["continue", "--due", "-w", root, "a message"], ["continue", "--run-id", "x", "-w", root, "-j", "2"]]) {
      const refused = await delta(args);
      expect(refused.exitCode, args.join(" ")).toBe(126);
    }
  });
});

describe("every surface knows DEFERRED", () => {
  it("run --if-exists resume continues a deferred run; show says what it waits for and how it goes on", async () => {
    const server = await modelByTask({ again: [recordedStep("openai-chat/error-insufficient-quota-429"), reply.text("went on")] });
    const ws = join(root, "ws-if-exists");
    try {
      expect((await run(server, ws, "again", "again")).exitCode).toBe(75);
      const shown = await delta(["show", "again", "-w", ws]);
      expect(shown.stdout).toMatch(/status +DEFERRED QUOTA_EXHAUSTED: The model endpoint .* says the account is out of quota or credit/);
      expect(shown.stdout).toMatch(/next +to go on: delta continue --run-id again -w \S+; `delta continue --due -w \S+` takes it at once \(its time is unknown\)/);
      const resumed = await run(server, ws, "again", "again", ["--if-exists", "resume"]);
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.json).toMatchObject({ status: "COMPLETED", result: "went on" });
      expect(readEvents(ws, "again").filter((event) => event.type === "USER_MESSAGE")).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
