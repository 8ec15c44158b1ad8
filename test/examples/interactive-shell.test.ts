// The interactive-shell example end to end: the model drives a delta-sessions shell; cd and export carry over between execs.
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type MockLlm, reply, toolResultsOf } from "../support/mock-llm.js";
import { execa } from "execa";
import { NO_MODEL_KEYS, actionResults, delta, modelEnv, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES, binDir, pathWith } from "./helpers.js";

const { root, serve } = setUpE2e("delta-shell-");
let server: MockLlm;

beforeAll(async () => {
  // The model's side: start, cd + export in one exec, read both back in the next, end, answer.
  server = await serve((request) => {
    const results = toolResultsOf(request);
    const sessionId = results.length > 0 ? (JSON.parse(results[0]!) as { session_id: string }).session_id : "";
    switch (results.length) {
      case 0:
        return reply.toolCalls([{ name: "session_start", arguments: {} }]);
      case 1:
        return reply.toolCalls([{ name: "session_exec", arguments: { session_id: sessionId, command: "mkdir -p demo/inner && cd demo/inner && export GREETING='hello there'" } }]);
      case 2:
        return reply.toolCalls([{ name: "session_exec", arguments: { session_id: sessionId, command: 'pwd\necho "$GREETING"' } }]);
      case 3:
        return reply.toolCalls([{ name: "session_end", arguments: { session_id: sessionId } }]);
      default:
        return reply.text("The session kept the directory and the variable.");
    }
  });
});

describe("examples/interactive-shell", () => {
  it("runs without a key through scripted-model.mjs: the documented command completes with the sizes read in the kept directory", async () => {
    const ws = join(root, "ws-scripted");
    const result = await execa(
      process.execPath,
      [join(EXAMPLES, "interactive-shell/scripted-model.mjs"), "delta", "run", "--agent", join(EXAMPLES, "interactive-shell"), "-w", ws, "--run-id", "scripted", "--format", "json", "-m", "Create a folder demo, cd into it, write three files and report their sizes"],
      { env: { ...NO_MODEL_KEYS, PATH: pathWith(binDir(join(root, "scripted"))) }, reject: false, stdin: "ignore", timeout: 60_000 },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const outcome = JSON.parse(result.stdout) as { status: string; result: string };
    expect(outcome.status).toBe("COMPLETED");
    expect(outcome.result).toContain("sizes in demo (demo)");
    expect(outcome.result).toMatch(/ 4 a\.txt\n 8 b\.txt\n18 c\.txt/);
    expect(actionResults(ws, "scripted").map((a) => [a.tool_name, a.status])).toEqual([
      ["session_start", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_end", "SUCCESS"],
    ]);
  });

  it("starts a session, keeps cd and export from one exec to the next, and ends it", async () => {
    const ws = join(root, "ws");
    const result = await delta(["run", "--agent", join(EXAMPLES, "interactive-shell"), "-w", ws, "--run-id", "shell", "-m", "Make demo/inner, go there, set GREETING, show both", "--format", "json"], {
      env: { ...modelEnv(server.baseUrl), PATH: pathWith(binDir(root)) },
    });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "COMPLETED", result: "The session kept the directory and the variable." });

    const actions = actionResults(ws, "shell");
    expect(actions.map((a) => [a.tool_name, a.status])).toEqual([
      ["session_start", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_exec", "SUCCESS"], ["session_end", "SUCCESS"],
    ]);
    const started = JSON.parse(actions[0]!.observation_content) as { session_id: string; status: string };
    expect(started).toMatchObject({ session_id: expect.stringMatching(/^sess_/), status: "active" });
    expect(JSON.parse(actions[1]!.observation_content)).toMatchObject({ exit_code: 0, stdout: "", timed_out: false });
    // The second exec ran in the directory and with the variable the first one left behind.
    expect(JSON.parse(actions[2]!.observation_content)).toMatchObject({ exit_code: 0, stdout: `${realpathSync(ws)}/demo/inner\nhello there\n`, timed_out: false });
    expect(JSON.parse(actions[3]!.observation_content)).toEqual({ status: "terminated", session_id: started.session_id });
  });
});
