// A long run holds V8's young generation at its first size (cli/young-generation.ts), and the code cache stays valid for the next start.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { delta, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";
import { reply, type MockLlm } from "../support/mock-llm.js";

const ITERATIONS = 150;

const { root, serve } = setUpE2e("delta-young-generation-");
let server: MockLlm;

beforeAll(async () => {
  server = await serve((request) => {
    const call = server.requests.indexOf(request) + 1;
    return call > ITERATIONS ? reply.text("done") : reply.toolCalls([{ id: `call_${call}`, name: "read", arguments: { n: String(call) } }]);
  });
}, 60_000);


/** engine.log's closing memory line, in bytes: the run's peak RSS and V8's young generation at the end. */
function memoryOf(ws: string, runId: string): { young: number } {
  const log = readFileSync(join(runDir(ws, runId), "engine.log"), "utf8");
  const line = /memory: peak RSS [\d.]+ MiB, V8 young generation ([\d.]+) (KiB|MiB)/.exec(log);
  if (line === null) throw new Error(`engine.log has no memory line:\n${log.slice(-2_000)}`);
  return { young: Number(line[1]) * (line[2] === "MiB" ? 2 ** 20 : 2 ** 10) };
}

it(`keeps V8's young generation at its first size through a ${ITERATIONS}-iteration run of 2 KB observations`, async () => {
  const agent = writeAgent(root, {
    agentYaml: ["name: long-read", "llm:", "  model: gpt-4o-mini", "  context_window: 1000000", "tools:", "  - name: read", '    shell: "head -c 2048 /dev/zero | tr \'\\\\0\' x; echo ${n}"'].join("\n"),
  });
  const ws = join(root, "ws");
  const run = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "long", "--format", "json", "--max-iterations", String(ITERATIONS + 5), "-m", "read"], {
    env: modelEnv(server.baseUrl),
    timeoutMs: 120_000,
  });
  expect(run.exitCode, run.stderr.slice(-3_000)).toBe(0);
  expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metrics: { iterations: ITERATIONS + 1 } });
  // Held from before the program loads, V8's young generation stays at 1-2 MiB on a quiet machine; a
  // scavenge that lands while V8 compiles the bundle under its default flags (run-bundle.ts) can double
  // it once more on a loaded one. Left to grow, this run takes it to 16 MiB.
  expect(memoryOf(ws, "long").young).toBeLessThanOrEqual(4 * 2 ** 20);
}, 180_000);
