// Submitting queued calls, offline against a batch client in memory: split at the provider's limits, every call's MODEL_SUBMITTED journaled before anything is sent and its batch id after, a refused batch queued again, a lost submission found, sent anew or left in doubt.
import { describe, expect, it } from "vitest";
import { BatchHttpError } from "../../src/llm/batch/batch-http.js";
import type { BatchClient, BatchLine } from "../../src/llm/batch/batch-client.js";
import type { NewEvent } from "../../src/journal/events.js";
import { submitCalls, type DoubtfulCall, type SubmittableCall } from "../../src/run/batch-submission.js";

type Submitted = Extract<NewEvent, { type: "MODEL_SUBMITTED" }>;

/** A client that keeps what it was sent; `find` answers as told; `refuse` makes every submit a 400. */
function memoryClient(options: { requests?: number; bytes?: number; found?: Awaited<ReturnType<BatchClient["find"]>>; refuse?: boolean } = {}): BatchClient & { sent: { submissionId: string; lines: readonly BatchLine[] }[] } {
  const sent: { submissionId: string; lines: readonly BatchLine[] }[] = [];
  return {
    sent,
    name: "Memory Batch",
    limits: { requests: options.requests ?? 100, bytes: options.bytes ?? 1_000_000 },
    size: (line) => JSON.stringify(line).length,
    async submit(submissionId, lines) {
      if (options.refuse) throw new BatchHttpError("creating the batch: HTTP 400: invalid input file", 400);
      sent.push({ submissionId, lines });
      return `batch_${sent.length}`;
    },
    find: async () => options.found ?? "none",
    state: async (id) => ({ id, status: "in_progress", ended: false, counts: {} }),
    results: async () => new Map(),
    cancel: async (id) => ({ id, status: "cancelling", ended: false, counts: {} }),
  };
}

/** `count` calls, each with its own journal. */
function calls(count: number, body: unknown = { model: "m" }): (SubmittableCall & { events: Submitted[] })[] {
  return Array.from({ length: count }, (_, index) => {
    const events: Submitted[] = [];
    return { runId: `r${index}`, iteration: 1, customId: `r${index}-i1-0000`, body, events, journal: (event: NewEvent) => events.push(event as Submitted) };
  });
}

const quiet = { progress: () => {}, resubmit: false };

describe("submitCalls", () => {
  it("splits at the provider's request limit: five calls, two a batch → batches of 2, 2, 1, each call journaled before its batch was sent and with its id after", async () => {
    const client = memoryClient({ requests: 2 });
    const five = calls(5);
    const journaledBeforeSend: number[] = [];
    const submit = client.submit.bind(client);
    client.submit = async (submissionId, lines, signal) => {
      journaledBeforeSend.push(five.filter((call) => call.events.some((event) => event.submission_id === submissionId && event.batch_id === null)).length);
      return submit(submissionId, lines, signal);
    };
    const report = await submitCalls(client, five, [], quiet);
    expect(client.sent.map((batch) => batch.lines.length)).toEqual([2, 2, 1]);
    expect(journaledBeforeSend).toEqual([2, 2, 1]);
    expect(report.batches.map((batch) => batch.calls)).toEqual([2, 2, 1]);
    expect(five[4]!.events.map((event) => [event.batch_id, event.requests])).toEqual([[null, 1], ["batch_3", 1]]);
    expect(new Set(five.map((call) => call.events[0]!.submission_id)).size).toBe(3);
  });

  it("splits at the byte limit, and a call larger than a whole batch is not sent, saying so", async () => {
    const client = memoryClient({ bytes: 200 });
    const small = calls(3, { text: "x".repeat(50) });
    const [huge] = calls(1, { text: "x".repeat(500) });
    const report = await submitCalls(client, [...small, { ...huge!, runId: "huge" }], [], quiet);
    expect(client.sent.map((batch) => batch.lines.length)).toEqual([2, 1]);
    expect(report.notSent).toMatchObject([{ runId: "huge", why: expect.stringContaining("more than a whole Memory Batch batch may hold (200)") }]);
    expect(huge!.events).toEqual([]);
  });

  it("a batch the provider refused (4xx: nothing made) is journaled failed, and its calls are queued again", async () => {
    const two = calls(2);
    const report = await submitCalls(memoryClient({ refuse: true }), two, [], quiet);
    expect(two[0]!.events.map((event) => event.failed !== undefined)).toEqual([false, true]);
    expect(report.notSent).toHaveLength(2);
    expect(report.batches).toEqual([]);
  });

  const doubtful = (found: Awaited<ReturnType<BatchClient["find"]>>): { client: ReturnType<typeof memoryClient>; calls: (DoubtfulCall & { events: Submitted[] })[] } => ({
    client: memoryClient({ found }),
    calls: calls(2).map((call) => ({ ...call, submissionId: "s-lost", submittedAt: 0, requests: 2 })),
  });

  it("a lost submission the provider made is found: its batch id journaled, nothing sent", async () => {
    const { client, calls: lost } = doubtful({ batchId: "batch_found" });
    const report = await submitCalls(client, [], lost, quiet);
    expect(client.sent).toEqual([]);
    expect(lost.map((call) => call.events.map((event) => [event.submission_id, event.batch_id]))).toEqual([[["s-lost", "batch_found"]], [["s-lost", "batch_found"]]]);
    expect(report.batches).toEqual([{ batchId: "batch_found", calls: 2, found: true }]);
  });

  it("a lost submission the provider never made is sent anew", async () => {
    const { client, calls: lost } = doubtful("none");
    await submitCalls(client, [], lost, quiet);
    expect(client.sent.map((batch) => batch.lines.length)).toEqual([2]);
  });

  it("a lost submission the provider cannot be asked about stays in doubt, unless --resubmit", async () => {
    const { client, calls: lost } = doubtful("unknowable");
    const report = await submitCalls(client, [], lost, quiet);
    expect(client.sent).toEqual([]);
    expect(report.notSent.map((left) => left.why)).toEqual([expect.stringContaining("submission s-lost is in doubt"), expect.stringContaining("--resubmit")]);
    await submitCalls(client, [], lost, { ...quiet, resubmit: true });
    expect(client.sent.map((batch) => batch.lines.length)).toEqual([2]);
  });
});
