// Spans sent to a collector that cannot be reached (a run's flush at exit, `delta export --otlp`): the first refused connection ends the wait, with no timer run.
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { sendJournalSpans, startLiveTrace } from "../../src/trace/otlp-export.js";

const JOURNAL = join("test", "fixtures", "runs", "old-format-run", "work", ".delta", "old-format-run", "journal.jsonl");

/** A loopback port nothing listens on: connecting to it is refused. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

describe("a run's live trace, flushed at exit", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  for (const protocol of ["http/protobuf", "http/json"] as const) {
    it(`a refused collector (${protocol}): the flush ends on the refusal itself, with no retry, no backoff and no bound waited for`, async () => {
      const port = await refusedPort();
      // Timers frozen: the SDK's retry after a backoff and the flush's own bound (10 minutes here) can never fire, so a
      // flush that waited on either would never end. Sockets, the SDK's loading and promises run as usual.
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
      const live = startLiveTrace({
        settings: { url: `http://127.0.0.1:${port}/v1/traces`, protocol, flushMs: 600_000, captureContent: false },
        env: {},
        journal: JOURNAL,
        fromSeq: 1,
        secrets: [],
      });
      const warning = await live.flush();
      expect(warning).toContain(`could not export the run's spans to http://127.0.0.1:${port}/v1/traces: connect ECONNREFUSED 127.0.0.1:${port}`);
      expect(warning).toContain("delta export --otlp");
    });
  }

  it("`delta export --otlp` to a refused collector: the export ends at the first refused connection, nothing sent, no timer run", async () => {
    const port = await refusedPort();
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const sent = await sendJournalSpans([JOURNAL], { url: `http://127.0.0.1:${port}/v1/traces`, protocol: "http/protobuf", timeoutMs: 600_000 }, {}, { captureContent: false });
    expect(sent).toEqual({ spans: 0, failure: `connect ECONNREFUSED 127.0.0.1:${port}` });
  });
});
