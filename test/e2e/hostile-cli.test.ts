// Hostile input through the real binary: the documented exit code, a message naming the file or field, no stack trace, nothing executed or written where it should not be.
import fc from "fast-check";
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CANARY, CANARY_CONTEXT, CANARY_HOOKS, hostileText, invalidAgentYaml, invalidRunId } from "../support/hostile-arbitraries.js";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { actionResults, CRASH_TRACE, delta, type DeltaResult, modelEnv, readEvents, runDir, writeAgent, setUpE2e } from "./harness.js";

const SEED = Number(process.env.DELTA_PROPERTY_SEED ?? 1123);
const { root } = setUpE2e("delta-hostile-cli-");
let ran = 0;

afterAll(() => {
  console.log(`hostile CLI (seed ${SEED}): ${ran} cases through the binary`);
});

interface RunResultJson {
  status: string;
  error?: { type: string; message: string };
}

/** Every path under `dir`, so a test can see that nothing appeared. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();
}

async function cli(args: string[], env: Record<string, string> = {}): Promise<DeltaResult> {
  ran += 1;
  const result = await delta(args, { env });
  expect(result.stderr).not.toMatch(CRASH_TRACE);
  return result;
}

describe.concurrent("hostile input through the delta binary", () => {
  it("warns about each unreadable .env line with its file and line number, and still runs", async () => {
    const server = await startMockLlm([reply.text("done")]);
    try {
      const agent = writeAgent(root, {}, "agent-env");
      const ws = join(root, "ws-env");
      mkdirSync(ws);
      writeFileSync(join(ws, ".env"), "# settings\nNOEQUALS\n1BAD=x\nQUOTED=\"never closed\nOK=1\n");
      const result = await cli(["run", "--agent", agent, "-w", ws, "-m", "go", "--format", "json"], modelEnv(server.baseUrl));
      expect(result.exitCode).toBe(0);
      expect(result.stderr).toContain(`[warning] ${join(ws, ".env")}:2: expected KEY=value; line skipped`);
      expect(result.stderr).toContain(`${join(ws, ".env")}:3: "1BAD" is not a valid variable name`);
      expect(result.stderr).toContain(`${join(ws, ".env")}:4: the " quote is never closed`);
    } finally {
      await server.close();
    }
  });

  it.each(fc.sample(invalidAgentYaml, { seed: SEED, numRuns: 4 }).map((yaml, index) => [index, yaml] as const))(
    "refuses invalid package %i with 126 and CONFIG_ERROR naming agent.yaml, running none of its hooks, tools or generators",
    async (index, agentYaml) => {
      const box = join(root, `pkg-${index}`);
      const canary = join(box, "CANARY");
      const agent = writeAgent(box, { agentYaml: agentYaml.replaceAll(CANARY, canary), hooksYaml: CANARY_HOOKS.replaceAll(CANARY, canary), contextYaml: CANARY_CONTEXT.replaceAll(CANARY, canary) });
      const before = tree(box);
      const result = await cli(["run", "--agent", agent, "-w", join(box, "ws"), "-m", "go", "--format", "json"], modelEnv("http://127.0.0.1:9/v1"));
      expect(result.exitCode).toBe(126);
      const json = JSON.parse(result.stdout) as RunResultJson;
      expect(json.error?.type).toBe("CONFIG_ERROR");
      expect(json.error?.message).toMatch(/^\/\S+\/agent\.yaml[:\s]/);
      expect(result.stderr).toMatch(/^Error: \/\S+\/agent\.yaml[:\s]/);
      expect(existsSync(canary)).toBe(false);
      expect(tree(box)).toEqual(before);
    },
  );

  it.each(fc.sample(invalidRunId.filter((id) => !id.includes("\u0000")), { seed: SEED, numRuns: 4 }).map((id, index) => [index, id] as const))(
    "refuses hostile run id %i (%j) with 126 and writes nothing",
    async (index, id) => {
      const box = join(root, `ids-${index}`);
      const agent = writeAgent(box, {});
      const before = tree(box);
      const result = await cli(["run", "--agent", agent, "-w", join(box, "ws"), "--run-id", id, "-m", "go", "--format", "json"], modelEnv("http://127.0.0.1:9/v1"));
      expect(result.exitCode).toBe(126);
      expect(["RUN_REFUSED", "USAGE_ERROR"]).toContain((JSON.parse(result.stdout) as RunResultJson).error?.type);
      expect(result.stderr).toMatch(/run id|--run-id/);
      expect(tree(box)).toEqual(before);
    },
  );

  it("passes hostile tool arguments from the model to exec: and shell: tools as data, and turns unspawnable ones into observations", async () => {
    const box = join(root, "args");
    const canary = join(box, "CANARY");
    const values = [...fc.sample(hostileText, { seed: SEED, numRuns: 6 }), "a\u0000b", "Z".repeat(200_000)].map((value) => value.replaceAll(CANARY, canary));
    const calls = values.map((text, index) => ({ name: index % 2 === 0 ? "show" : "show_sh", arguments: { text }, id: `call_${index}` }));
    const server = await startMockLlm([reply.toolCalls(calls), reply.text("done")]);
    try {
      const agent = writeAgent(box, { tools: 'tools:\n  - name: show\n    exec: "printf -- %s ${text}"\n  - name: show_sh\n    shell: "printf -- %s ${text}"\n' });
      const ws = join(box, "ws");
      const result = await cli(["run", "--agent", agent, "-w", ws, "--run-id", "args", "-m", "go", "--format", "json"], modelEnv(server.baseUrl));
      expect(result.exitCode).toBe(0);
      const records = new Map(
        readdirSync(join(runDir(ws, "args"), "io", "tool_executions")).map((name) => {
          const record = JSON.parse(readFileSync(join(runDir(ws, "args"), "io", "tool_executions", name), "utf8")) as { action_id: string; stdout: string };
          return [record.action_id, record] as const;
        }),
      );
      const results = actionResults(ws, "args");
      expect(results).toHaveLength(values.length);
      values.forEach((value, index) => {
        const observed = results.find((event) => event.action_id === `call_${index}`);
        if (value.includes("\u0000") || value.length > 131_072) {
          expect(observed).toMatchObject({ status: "ERROR" });
        } else {
          expect(observed).toMatchObject({ status: "SUCCESS" });
          expect(records.get(`call_${index}`)?.stdout).toBe(value);
        }
      });
      expect(existsSync(canary)).toBe(false);
      expect(tree(box).filter((path) => !path.startsWith("agent") && !path.startsWith("ws"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("refuses to continue a journal with a damaged line (exit 1, JOURNAL_ERROR naming file and line); list-runs skips it with a warning", async () => {
    const server = await startMockLlm([reply.text("first"), reply.text("second"), reply.text("after the torn write")]);
    try {
      const agent = writeAgent(root, {}, "agent-journal");
      const ws = join(root, "ws-journal");
      expect((await cli(["run", "--agent", agent, "-w", ws, "--run-id", "good", "-m", "go"], modelEnv(server.baseUrl))).exitCode).toBe(0);
      expect((await cli(["run", "--agent", agent, "-w", ws, "--run-id", "bad", "-m", "go"], modelEnv(server.baseUrl))).exitCode).toBe(0);
      const badJournal = join(runDir(ws, "bad"), "journal.jsonl");
      const lines = readFileSync(badJournal, "utf8").split("\n");
      lines.splice(1, 0, '{"seq": 2, "type": "THOUGHT", "garbage": true}');
      writeFileSync(badJournal, lines.join("\n"));
      writeFileSync(join(runDir(ws, "good"), "journal.jsonl"), `${readFileSync(join(runDir(ws, "good"), "journal.jsonl"), "utf8")}{"seq": 99, "ty`);

      const refused = await cli(["continue", "--run-id", "bad", "-w", ws, "-m", "again", "--format", "json"], modelEnv(server.baseUrl));
      expect(refused.exitCode).toBe(1);
      const json = JSON.parse(refused.stdout) as RunResultJson;
      expect(json.error?.type).toBe("JOURNAL_ERROR");
      expect(json.error?.message).toContain(`${badJournal} line 2:`);

      const listed = await cli(["list-runs", "-w", ws, "--format", "json"]);
      expect(listed.exitCode).toBe(0);
      expect((JSON.parse(listed.stdout) as { run_id: string }[]).map((run) => run.run_id)).toEqual(["good"]);
      expect(listed.stderr).toMatch(/run bad: skipped: .*line 2/);

      const resumed = await cli(["continue", "--run-id", "good", "-w", ws, "-m", "again", "--format", "json"], modelEnv(server.baseUrl));
      expect(resumed.stderr).toMatch(/torn last line/);
      expect(resumed.exitCode).toBe(0);
      expect(readEvents(ws, "good").map((event) => event.seq)).toEqual(readEvents(ws, "good").map((_, index) => index + 1));
    } finally {
      await server.close();
    }
  });
});
