// `continue` of a long run holds what its next request can show, not the run: the journal is folded as it streams past and only the iterations from the last window move are kept.
//
// The journal is a long run's as the engine writes it with `max_iterations: 10`: tool-calling iterations of 16 KB
// results, a CONTEXT_WINDOW every ten. It is larger than the heap `continue` is given, so an engine that held the
// events of the whole journal runs out of memory before its first request.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { LONG_RUN, setUpLongRun } from "../support/long-run-journal.js";
import { delta, readEvents, runDir } from "./harness.js";

const long = setUpLongRun();

it("continues a journal three times its heap, sending the window the journal's last move left", async () => {
  expect(long.journalBytes).toBeGreaterThan(3 * LONG_RUN.heapMb * 2 ** 20);
  const { server, ws } = long;
  const before = server.requests.length;
  const continued = await delta(["continue", "--run-id", "long", "-w", ws, "-m", "now the index"], { env: long.heapCapped() });
  expect(continued.exitCode, continued.stderr).toBe(0);
  expect(server.requests.length).toBe(before + 1);
  // The system prompt, the two user messages and the iterations from the last move on: each a call and its result.
  const lastFirst = LONG_RUN.iterations - ((LONG_RUN.iterations - 1) % 5) - 5;
  const sent = server.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] };
  expect(sent.messages.filter((message) => message.role === "user").map((message) => message.content)).toEqual(["read every page", "now the index"]);
  expect(sent.messages.filter((message) => message.role === "tool")).toHaveLength(LONG_RUN.iterations - lastFirst + 1);
  expect(readEvents(ws, "long").slice(-3).map((event) => event.type)).toEqual(["USER_MESSAGE", "THOUGHT", "ENGINE_END"]);
  // Read once from the start, folded on that one read.
  const log = readFileSync(join(runDir(ws, "long"), "engine.log"), "utf8");
  expect(log).toMatch(/journal reads: 1 from the start/);
}, 120_000);
