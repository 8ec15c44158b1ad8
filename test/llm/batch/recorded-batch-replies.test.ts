// The batch clients against the providers' real recorded replies (test/fixtures/recorded/openai-batch, anthropic-batch), served byte for byte, and against hostile ones: states read as the providers mean them, a lost submission looked for page by page, results matched by custom id, every reply bounded.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { anthropicBatchClient } from "../../../src/llm/batch/anthropic-batch.js";
import { openAiBatchClient } from "../../../src/llm/batch/openai-batch.js";
import { recordedBytes, recordedEntry } from "../../support/recorded.js";

interface Served {
  status?: number;
  body: Buffer | string;
  type?: string;
  headers?: Record<string, string>;
}

let server: Server | null = null;
const asked: string[] = [];
afterEach(async () => {
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = null;
  asked.length = 0;
});

/** A server answering each `METHOD path?query` from `routes`; 404 for anything else. */
async function serve(routes: Record<string, Served>): Promise<string> {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = `${req.method} ${req.url}`;
      asked.push(key);
      const route = routes[key];
      if (!route) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `no route ${key}` } }));
        return;
      }
      res.writeHead(route.status ?? 200, { "content-type": route.type ?? "application/json", ...route.headers });
      res.end(route.body);
    });
  });
  const address = await new Promise<AddressInfo>((done) => server!.listen(0, "127.0.0.1", () => done(server!.address() as AddressInfo)));
  return `http://127.0.0.1:${address.port}`;
}

/** A recorded reply as its manifest says it was served. */
function recorded(name: string): Served {
  const entry = recordedEntry(name);
  return { status: entry.status, body: recordedBytes(name), type: entry.content_type, ...(entry.headers ? { headers: entry.headers } : {}) };
}

const KEY = "sk-test-secret-key-123";
const openai = (origin: string) => openAiBatchClient({ baseUrl: `${origin}/v1`, headers: { authorization: `Bearer ${KEY}` } }, "/v1/responses", [KEY]);
const anthropic = (origin: string) => anthropicBatchClient({ baseUrl: origin, headers: { "x-api-key": KEY } }, [KEY]);

describe("OpenAI Batch, recorded", () => {
  const id = "batch_6a85c08a63188190982c56b42faa4ff5";

  it("a batch in progress has not ended; a completed one has, with its counts", async () => {
    const origin = await serve({ [`GET /v1/batches/${id}`]: recorded("openai-batch/retrieve-in-progress-partial-counts.response.json") });
    const running = await openai(origin).state(id);
    expect(running).toMatchObject({ id, status: "in_progress", ended: false });
    await new Promise<void>((done) => server!.close(() => done()));
    const again = await serve({ [`GET /v1/batches/${id}`]: recorded("openai-batch/retrieve-completed.response.json") });
    expect(await openai(again).state(id)).toMatchObject({ status: "completed", ended: true, counts: { total: 2, completed: 2, failed: 0 } });
  });

  it("results are matched by custom id in the recorded output file; a custom id the file lacks is absent", async () => {
    const origin = await serve({
      [`GET /v1/batches/${id}`]: recorded("openai-batch/retrieve-completed.response.json"),
      "GET /v1/files/file-4SnbT9qu8ShH2A1wCvTHNp/content": recorded("openai-batch/output-file-responses.response.jsonl"),
    });
    const client = openai(origin);
    const results = await client.results(await client.state(id), new Set(["1"]));
    expect([...results.keys()]).toEqual(["1"]);
    expect(results.get("1")).toMatchObject({ kind: "succeeded", body: { object: "response", status: "completed" } });
  });

  it("a lost submission is looked for newest first and, when no batch since it carries its id, is known never made", async () => {
    const origin = await serve({ "GET /v1/batches?limit=100": recorded("openai-batch/list-has-more.response.json") });
    // Submitted in 2025-03: the recorded pages (newest first, back to 2025-02) are read until a batch older than that.
    expect(await openai(origin).find("s-nowhere", Date.parse("2025-03-14T00:00:00Z"))).toBe("none");
    expect(asked).toEqual(["GET /v1/batches?limit=100"]);
  });

  it("a batch that failed validation ended with no result for any call: each is a failure saying why", async () => {
    const failed = { ...(JSON.parse(recordedBytes("openai-batch/retrieve-completed.response.json").toString()) as Record<string, unknown>), status: "failed", output_file_id: null, errors: { object: "list", data: [{ code: "invalid_request", line: 1, message: "The model 'x' does not exist.", param: null }] } };
    const origin = await serve({ [`GET /v1/batches/${id}`]: { body: JSON.stringify(failed) } });
    const client = openai(origin);
    const results = await client.results(await client.state(id), new Set(["0"]));
    expect(results.get("0")).toMatchObject({ kind: "failed", reason: "the batch ended failed with no result for it (The model 'x' does not exist.)" });
  });

  it("a cancelled batch reads as cancelling, not ended", async () => {
    const origin = await serve({ "POST /v1/batches/batch_x/cancel": recorded("openai-batch/cancel-cancelling.response.json") });
    expect(await openai(origin).cancel("batch_x")).toMatchObject({ status: "cancelling", ended: false });
  });
});

describe("Anthropic Message Batches, recorded", () => {
  const id = "msgbatch_01GUqGVJfUzZfBnjRymfPdV3";

  it("in progress (Retry-After: 10 on a 200) has not ended; ended has, its results read from the batch's own path", async () => {
    const origin = await serve({
      [`GET /v1/messages/batches/${id}`]: recorded("anthropic-batch/retrieve-ended.response.json"),
      [`GET /v1/messages/batches/${id}/results`]: recorded("anthropic-batch/results-succeeded.response.jsonl"),
    });
    const client = anthropic(origin);
    const state = await client.state(id);
    expect(state).toMatchObject({ status: "ended", ended: true, counts: { succeeded: 2 } });
    const results = await client.results(state, new Set(["0", "9"]));
    expect(results.get("0")).toMatchObject({ kind: "succeeded", body: { type: "message", usage: { service_tier: "batch" } } });
    expect(results.get("9")).toMatchObject({ kind: "failed" });
    // The recorded results_url names api.anthropic.com: it was not followed.
    expect(asked).toEqual([`GET /v1/messages/batches/${id}`, `GET /v1/messages/batches/${id}/results`]);
  });

  it("in progress: not ended", async () => {
    const origin = await serve({ [`GET /v1/messages/batches/${id}`]: recorded("anthropic-batch/retrieve-in-progress-retry-after.response.json") });
    expect(await anthropic(origin).state(id)).toMatchObject({ status: "in_progress", ended: false });
  });

  it("results asked before the end: the 404's own words", async () => {
    const origin = await serve({ [`GET /v1/messages/batches/${id}/results`]: recorded("anthropic-batch/error-results-not-available-404.response.json") });
    await expect(anthropic(origin).results({ id, status: "ended", ended: true, counts: {} }, new Set(["0"]))).rejects.toThrow(/HTTP 404: Message Batch msgbatch_01AHxNhUeZwskhx38tGz1QVj has no available results\./);
  });

  it("a lost submission cannot be looked up", async () => {
    expect(await anthropic("http://127.0.0.1:9").find("s1", 0)).toBe("unknowable");
  });
});

describe("hostile batch replies", () => {
  it("a reply larger than any batch object is refused unread, naming the endpoint", async () => {
    const origin = await serve({ "GET /v1/batches/b": { body: Buffer.alloc(9 << 20, 0x20) } });
    await expect(openai(origin).state("b")).rejects.toThrow(/GET http:\/\/127\.0\.0\.1:\d+\/v1\/batches\/b: the reply is larger than 8388608 bytes/);
  });

  it("a batch object without its fields is refused, naming the field", async () => {
    const origin = await serve({ "GET /v1/batches/b": { body: JSON.stringify({ id: "b" }) } });
    await expect(openai(origin).state("b")).rejects.toThrow(/asking batch b: the reply is not a batch object \(status:/);
  });

  it("a results line that is not JSON is an error naming the line", async () => {
    const origin = await serve({ "GET /v1/messages/batches/m/results": { body: '{"custom_id":"0","result":{"type":"canceled"}}\nnot json\n' } });
    await expect(anthropic(origin).results({ id: "m", status: "ended", ended: true, counts: {} }, new Set(["0"]))).rejects.toThrow(/line 2 is not JSON/);
  });

  it("an error body repeating the key has it removed from the message", async () => {
    const origin = await serve({ "GET /v1/batches/b": { status: 401, body: JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }) } });
    const err = (await openai(origin).state("b").catch((caught: unknown) => caught)) as Error;
    expect(err.message).toContain("HTTP 401: Incorrect API key provided:");
    expect(err.message).not.toContain(KEY);
  });
});
