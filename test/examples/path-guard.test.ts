// The path-guard example agent, run by the real `delta` binary: its hook blocks paths that leave the workspace.
import { execa } from "execa";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm, toolResultsOf } from "../support/mock-llm.js";
import { delta, listIo, modelEnv, readEvents, setUpE2e } from "../e2e/harness.js";
import { EXAMPLES } from "./helpers.js";

const AGENT = join(EXAMPLES, "path-guard");
const GUARD = join(AGENT, "hooks/path-guard.mjs");
const SECRET_TEXT = "contents that must stay outside";

const { root } = setUpE2e("delta-path-guard-");
let outside: string;
beforeAll(() => {
  outside = join(root, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "secret.txt"), `${SECRET_TEXT}\n`);
});

/** A workspace with a note to read, a subfolder, and a link that points out of it. */
function makeWorkspace(name: string): string {
  const ws = join(root, name);
  mkdirSync(join(ws, "notes"), { recursive: true });
  writeFileSync(join(ws, "notes", "todo.md"), "- water the plants\n");
  symlinkSync(outside, join(ws, "escape"));
  return ws;
}

/** Runs the guard as the engine would, and returns its block reason or null when it allows the call. */
async function guard(ws: string, args: unknown): Promise<string | null> {
  const stdin = JSON.stringify({ hook: "pre_tool_execution", run_id: "r", iteration: 1, payload: { id: "c1", name: "read_file", arguments: JSON.stringify(args) } });
  const result = await execa(process.execPath, [GUARD, "path"], { cwd: ws, input: stdin, env: { DELTA_CWD: ws } });
  expect(result.exitCode).toBe(0);
  if (result.stdout.trim() === "") return null;
  const output = JSON.parse(result.stdout) as { decision: string; reason: string };
  expect(output.decision).toBe("block");
  return output.reason;
}

describe.concurrent("examples/path-guard", () => {
  it("runs without a key on the shipped recording: todo.md read, /etc/passwd refused by the hook, done.md written", async () => {
    const ws = join(root, "guarded");
    mkdirSync(ws);
    writeFileSync(join(ws, "todo.md"), "- water the plants\n");
    const result = await delta(
      ["run", "--agent", AGENT, "-w", ws, "--replay", join(AGENT, "recording.jsonl"), "--run-id", "replayed", "-m", "Read todo.md and /etc/passwd, then write done.md listing what you did"],
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const results = readEvents(ws, "replayed").filter((event) => event.type === "ACTION_RESULT");
    expect(results.map((event) => event.type === "ACTION_RESULT" && [event.tool_name, event.status])).toEqual([
      ["read_file", "SUCCESS"], ["read_file", "ERROR"], ["write_file", "SUCCESS"],
    ]);
    expect(results[1]).toMatchObject({ observation_content: expect.stringContaining('Blocked by pre_tool_execution hook: read_file: path "/etc/passwd"') });
    expect(readFileSync(join(ws, "done.md"), "utf8")).toContain("- read todo.md: water the plants");
  });

  it("blocks ../../etc/passwd with its reason as the observation, and reads and writes inside the workspace", async () => {
    const server = await startMockLlm([
      reply.toolCalls([
        { name: "read_file", arguments: { path: "../../etc/passwd" } },
        { name: "read_file", arguments: { path: "notes/todo.md" } },
        { name: "write_file", arguments: { path: "notes/done.md", content: "- plants watered\n" } },
      ]),
      reply.text("I read notes/todo.md and wrote notes/done.md; /etc/passwd is outside the workspace."),
    ]);
    try {
      const ws = makeWorkspace("ws-run");
      const result = await delta(["run", "--agent", AGENT, "-w", ws, "--run-id", "guard-1", "-m", "read ../../etc/passwd, then do my notes"], { env: modelEnv(server.baseUrl) });
      expect(result.exitCode, result.stderr).toBe(0);

      const observations = toolResultsOf(server.requests[1]!);
      expect(observations).toHaveLength(3);
      expect(observations[0]).toContain('Blocked by pre_tool_execution hook: read_file: path "../../etc/passwd" resolves to');
      expect(observations[0]).toContain(`outside the workspace ${ws}`);
      expect(observations[0]).not.toContain("root:");
      expect(observations[1]).toContain("- water the plants");
      expect(observations[2]).toContain("- plants watered");
      expect(readFileSync(join(ws, "notes", "done.md"), "utf8")).toBe("- plants watered\n");

      // Nothing ran for the blocked call: no command was resolved and only the two allowed tools executed.
      const requests = readEvents(ws, "guard-1").filter((event) => event.type === "ACTION_REQUEST");
      expect(requests.map((event) => event.type === "ACTION_REQUEST" && event.resolved_command)).toEqual([null, ["cat", "--", "notes/todo.md"], ["tee", "--", "notes/done.md"]]);
      expect(listIo(ws, "guard-1", "tool_executions")).toHaveLength(2);
    } finally {
      await server.close();
    }
  });

  it.each([
    ["an absolute path outside", "/etc/passwd", "resolves to /etc/passwd, outside the workspace"],
    ["a symbolic link that points out", "escape/secret.txt", "leads through a symbolic link to"],
    ["'..' after a link that points out", "escape/../outside/secret.txt", "leads through a symbolic link to"],
    ["a dangling link", "dangling", "cannot be resolved"],
    ["the engine's run records", ".delta/guard-1/journal.jsonl", "is inside .delta"],
    ["an option in disguise", "-n", 'starts with "-"'],
    ["a path that is not a string", 42, "must be a non-empty string"],
  ])("refuses %s", async (_name, path, reason) => {
    const ws = makeWorkspace(`ws-refuse-${String(path).replace(/[^a-z0-9]/gi, "_")}`);
    symlinkSync(join(root, "nowhere"), join(ws, "dangling"));
    expect(await guard(ws, { path })).toContain(reason);
  });

  it.each([
    ["a relative file", "notes/todo.md"],
    ["the workspace itself", "."],
    ["a new file in a new folder", "drafts/new.md"],
    ["'..' that stays inside", "notes/../notes/todo.md"],
  ])("allows %s", async (_name, path) => {
    const ws = makeWorkspace(`ws-allow-${path.replace(/[^a-z0-9]/gi, "_")}`);
    expect(await guard(ws, { path })).toBeNull();
  });

  it("allows an absolute path inside the workspace and leaves calls without a path alone", async () => {
    const ws = makeWorkspace("ws-absolute");
    expect(await guard(ws, { path: join(ws, "notes/todo.md") })).toBeNull();
    expect(await guard(ws, { text: "../../etc/passwd" })).toBeNull();
  });
});
