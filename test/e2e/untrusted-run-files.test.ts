// End to end: FIFOs and /dev/zero symlinks planted as run files make every command end quickly, in bounded memory, with the file named; a removed io/ is made again.
import { execFileSync } from "node:child_process";
import { execa } from "execa";
import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { reply, type MockLlm } from "../support/mock-llm.js";
import { DELTA_BIN, NO_MODEL_KEYS, delta, listIo, modelEnv, runDir, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e("delta-run-files-");
let server: MockLlm;
let agent: string;
/** A workspace with two completed runs, "good" and "bad", made once: each test plants its file in a copy of it. */
let template: string;

beforeAll(async () => {
  server = await serve(() => reply.text("answer"));
  agent = writeAgent(root, {}, "agent");
  template = join(root, "ws-template");
  for (const id of ["good", "bad"]) {
    const made = await delta(["run", "--agent", agent, "-w", template, "--run-id", id, "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(made.exitCode, made.stderr).toBe(0);
  }
});

/** A new workspace holding the template's two completed runs. */
function workspaceWithRuns(name: string): string {
  const ws = join(root, name);
  cpSync(template, ws, { recursive: true });
  return ws;
}

type Plant = "fifo" | "dev-zero";
const TARGETS: { name: string; file: (ws: string, runId: string) => string }[] = [
  { name: "metadata.json", file: (ws, id) => join(runDir(ws, id), "metadata.json") },
  { name: "journal.jsonl", file: (ws, id) => join(runDir(ws, id), "journal.jsonl") },
  { name: "owner record", file: (ws, id) => join(runDir(ws, id), ".lock", readdirSync(join(runDir(ws, id), ".lock")).sort().at(-1)!) },
  { name: "VERSION", file: (ws) => join(ws, ".delta", "VERSION") },
];

function plant(file: string, kind: Plant): void {
  rmSync(file, { force: true });
  if (kind === "fifo") execFileSync("mkfifo", [file]);
  else symlinkSync("/dev/zero", file);
}

/** A command's data segment is capped at this (prlimit): reading a /dev/zero whole would crash it, where every command here needs a fraction. */
const MEMORY_CAP_BYTES = 512 << 20;

/** Every command ends on its own (a planted file that hung it would meet the kill at 60 s), and within MEMORY_CAP_BYTES. */
async function ends(args: string[], ws: string): Promise<{ exitCode: number; stderr: string; stdout: string }> {
  const accept = args[0] === "continue" && !args.includes("--accept-endpoint") ? ["--accept-endpoint"] : [];
  const result = await execa("prlimit", [`--data=${MEMORY_CAP_BYTES}`, "--", process.execPath, DELTA_BIN, ...args, ...accept], {
    env: { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl) },
    stdin: "ignore",
    reject: false,
    timeout: 60_000,
  });
  const ended = { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  expect(result.timedOut, `${args.join(" ")} in ${ws}: ${ended.stderr}`).toBe(false);
  expect(result.signal, `${args.join(" ")} in ${ws}: ${ended.stderr}`).toBeUndefined();
  return ended;
}

describe("planted run files", () => {
  for (const target of TARGETS) {
    for (const kind of ["fifo", "dev-zero"] as const) {
      it(`a ${kind} as ${target.name}: list-runs, show, report and continue each end within seconds, the file named`, async () => {
        const ws = workspaceWithRuns(`ws-${target.name.replace(/\W/g, "-")}-${kind}`);
        const file = target.file(ws, "bad");
        plant(file, kind);

        const listed = await ends(["list-runs", "-w", ws, "--format", "json"], ws);
        if (target.name !== "VERSION") {
          expect(listed.exitCode, listed.stderr).toBe(0);
          const ids = (JSON.parse(listed.stdout) as { run_id: string }[]).map((run) => run.run_id);
          expect(ids).toContain("good");
          if (target.name === "journal.jsonl") {
            expect(ids).not.toContain("bad");
            expect(listed.stderr).toContain(file);
          }
        }
        const show = await ends(["show", "bad", "-w", ws], ws);
        const report = await ends(["report", "bad", "-w", ws], ws);
        const resumed = await ends(["continue", "--run-id", "bad", "-w", ws, "-m", "more"], ws);
        if (target.name !== "VERSION" && target.name !== "owner record") {
          for (const result of [show, report]) expect(result.stderr).toContain(file);
        }
        if (target.name !== "VERSION") {
          expect(resumed.exitCode).not.toBe(0);
          expect(resumed.stderr).toContain(file);
        }
      }, 120_000);
    }
  }

  for (const kind of ["fifo", "dev-zero"] as const) {
    it(`a ${kind} as an io record: report leaves a hook record out of the timeline, show --request names an invocation record; both end within seconds`, async () => {
      const ws = workspaceWithRuns(`ws-io-record-${kind}`);
      const hooksDir = join(runDir(ws, "bad"), "io", "hooks");
      mkdirSync(hooksDir, { recursive: true });
      const hookRecord = join(hooksDir, "20260101T000000000Z-pre_llm_req.json");
      plant(hookRecord, kind);
      const [invocation] = listIo(ws, "bad", "invocations");
      const invocationRecord = join(runDir(ws, "bad"), "io", "invocations", invocation!);
      plant(invocationRecord, kind);

      const report = await ends(["report", "bad", "-w", ws, "-o", join(root, `report-${kind}.html`)], ws);
      expect(report.exitCode, report.stderr).toBe(0);
      expect(report.stderr).toContain(`${hookRecord}: left out of the timeline`);
      // Every THOUGHT of this journal carries its call's timing: the invocation records are not even opened.
      expect(report.stderr).not.toContain(invocationRecord);
      const request = await ends(["show", "bad", "-w", ws, "--request", "1"], ws);
      expect(request.exitCode).not.toBe(0);
      expect(request.stderr).toContain(invocationRecord);
    }, 60_000);
  }

  for (const kind of ["fifo", "dev-zero"] as const) {
    it(`--replay meets a ${kind} as an invocation record, the journal or the replies file: it ends within seconds, the file named`, async () => {
      const replies = join(root, `replies-${kind}.jsonl`);
      const targets = [
        { id: "record", file: (ws: string) => join(runDir(ws, "bad"), "io", "invocations", listIo(ws, "bad", "invocations")[0]!) },
        { id: "journal", file: (ws: string) => join(runDir(ws, "bad"), "journal.jsonl") },
        { id: "replies", file: () => replies },
      ];
      for (const target of targets) {
        const ws = workspaceWithRuns(`ws-replay-${kind}-${target.id}`);
        const source = target.id === "replies" ? replies : runDir(ws, "bad");
        const file = target.file(ws);
        plant(file, kind);
        const replayed = await ends(["run", "--agent", agent, "-w", join(root, `ws-replayed-${kind}`), "-y", "-m", "go", "--replay", source], ws);
        expect(replayed.exitCode, replayed.stderr).not.toBe(0);
        expect(replayed.stderr).toContain(file);
        // The named replies file is the user's: its symlink is followed, and what it names refused.
        expect(replayed.stderr).toContain(kind === "fifo" ? "FIFO" : target.id === "replies" ? "/dev/zero, which is a device" : "symbolic link");
      }
    }, 120_000);
  }

  it("a FIFO or a /dev/zero symlink as io/invocations/request-parts.jsonl: show --request and continue end within seconds, the file named", async () => {
    for (const kind of ["fifo", "dev-zero"] as const) {
      const ws = workspaceWithRuns(`ws-request-parts-${kind}`);
      const file = join(runDir(ws, "bad"), "io", "invocations", "request-parts.jsonl");
      plant(file, kind);
      const shown = await ends(["show", "bad", "-w", ws, "--request", "1"], ws);
      const resumed = await ends(["continue", "--run-id", "bad", "-w", ws, "-m", "more", "--accept-endpoint"], ws);
      for (const result of [shown, resumed]) {
        expect(result.exitCode, result.stderr).not.toBe(0);
        // continue fails in the run (its summary on stdout names the error), show before it prints anything.
        expect(result.stderr + result.stdout).toContain(`${file} is`);
      }
    }
  }, 120_000);

  it("a FIFO or a /dev/zero symlink as the agent's workspaces/LAST_USED: a new run still starts at once, in a new workspace", async () => {
    const own = writeAgent(root, {}, "agent-last-used");
    const first = await delta(["run", "--agent", own, "-y", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    for (const [kind, next] of [["fifo", "W002"], ["dev-zero", "W003"]] as const) {
      plant(join(own, "workspaces", "LAST_USED"), kind);
      const again = await ends(["run", "--agent", own, "-y", "-m", "go"], own);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(readdirSync(join(own, "workspaces"))).toContain(next);
    }
  }, 60_000);

  it("a run whose io/ was removed continues, and its io/ is made again", async () => {
    const ws = join(root, "ws-no-io");
    const first = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "r", "-m", "go"], { env: modelEnv(server.baseUrl) });
    expect(first.exitCode, first.stderr).toBe(0);
    rmSync(join(runDir(ws, "r"), "io"), { recursive: true });
    const again = await delta(["continue", "--run-id", "r", "-w", ws, "-m", "more"], { env: modelEnv(server.baseUrl) });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(listIo(ws, "r", "invocations")).toHaveLength(1);
  });
});
