// `delta` started as a command holds glibc's malloc to two arenas in its own process, unless the user chose a number; its tools see the environment as the user set it.
import { execa } from "execa";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { actionResults, DELTA_BIN, NO_MODEL_KEYS, modelEnv, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-arenas-");
let server: MockLlm;
let agent: string;
let runs = 0;

beforeAll(async () => {
  server = await serve([]);
  agent = writeAgent(root, {
    agentYaml: ["name: arenas-agent", "llm:", "  model: mock-model", "  max_retries: 0", "tools:", "  - name: show_env", '    exec: "/bin/sh ${AGENT_HOME}/show-env.sh"'].join("\n"),
  });
  // The tool's parent is the engine: /proc/$PPID/environ is the environment the engine's process started with.
  writeFileSync(
    join(agent, "show-env.sh"),
    [
      'echo "tool: arenas=[${MALLOC_ARENA_MAX-unset}] mark=[${DELTA_LAUNCHER_MALLOC_ARENAS-unset}] tunables=[${GLIBC_TUNABLES-unset}]"',
      'echo "engine: $(tr "\\0" "\\n" < /proc/$PPID/environ | grep -E "^(MALLOC_ARENA_MAX|DELTA_LAUNCHER_MALLOC_ARENAS)=" | sort | tr "\\n" " ")"',
      "",
    ].join("\n"),
  );
});

/** What the engine's process started with and what its tool saw, for `delta run` started as an executable (its shell lines run first). */
async function seenWith(env: Record<string, string | undefined>): Promise<{ tool: string; engine: string }> {
  runs += 1;
  const runId = `arenas-${runs}`;
  const workDir = join(root, `ws-${runs}`);
  server.push(reply.toolCalls([{ name: "show_env", arguments: {} }]), reply.text("done"));
  const result = await execa(DELTA_BIN, ["run", "--agent", agent, "-w", workDir, "--run-id", runId, "-m", "show the environment"], {
    env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), MALLOC_ARENA_MAX: undefined, GLIBC_TUNABLES: undefined, DELTA_LAUNCHER_MALLOC_ARENAS: undefined, ...env },
    reject: false,
    timeout: 30_000,
  });
  expect(result.exitCode, String(result.stderr)).toBe(0);
  const lines = (actionResults(workDir, runId)[0]?.observation_content ?? "").split("\n");
  return { tool: lines.find((line) => line.startsWith("tool: ")) ?? "", engine: lines.find((line) => line.startsWith("engine: ")) ?? "" };
}

describe("malloc's arenas through the delta command", () => {
  it.each([
    { why: "none chosen: two arenas for the engine's process, and its tool's environment without the variable", env: {}, engine: "DELTA_LAUNCHER_MALLOC_ARENAS=2 MALLOC_ARENA_MAX=2 ", tool: "arenas=[unset] mark=[unset] tunables=[unset]" },
    { why: "the user's number, for the engine and its tool alike", env: { MALLOC_ARENA_MAX: "4" }, engine: "MALLOC_ARENA_MAX=4 ", tool: "arenas=[4] mark=[unset] tunables=[unset]" },
    { why: "the user's empty value, left as it is", env: { MALLOC_ARENA_MAX: "" }, engine: "MALLOC_ARENA_MAX= ", tool: "arenas=[] mark=[unset] tunables=[unset]" },
    { why: "other GLIBC_TUNABLES: two arenas still, the tunables passed on", env: { GLIBC_TUNABLES: "glibc.malloc.tcache_count=0" }, engine: "DELTA_LAUNCHER_MALLOC_ARENAS=2 MALLOC_ARENA_MAX=2 ", tool: "arenas=[unset] mark=[unset] tunables=[glibc.malloc.tcache_count=0]" },
    { why: "arena_max in GLIBC_TUNABLES: malloc left alone", env: { GLIBC_TUNABLES: "glibc.malloc.arena_max=3" }, engine: "", tool: "arenas=[unset] mark=[unset] tunables=[glibc.malloc.arena_max=3]" },
  ])("$why", async ({ env, engine, tool }) => {
    const seen = await seenWith(env);
    expect(seen.engine).toBe(`engine: ${engine}`);
    expect(seen.tool).toBe(`tool: ${tool}`);
  });
});
