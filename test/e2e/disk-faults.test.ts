// A full disk and a read-only workspace: a clear error, the documented exit code, and a journal that stays valid.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { deriveRunState, readJournal } from "../support/journal-read.js";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

import { reply, startMockLlm } from "../support/mock-llm.js";
import { inMountNamespace, mountUnsupportedReason } from "../support/mount-namespace.js";
import { CRASH_TRACE, DELTA_BIN, modelEnv, NO_MODEL_KEYS, writeAgent, setUpE2e } from "./harness.js";

const { root } = setUpE2e("delta-disk-");
let unsupported: string | null;
beforeAll(async () => {
  unsupported = await mountUnsupportedReason();
  if (unsupported) console.log(`disk fault tests skipped: ${unsupported}`);
});

/** Runs delta inside the namespace; its stdout, stderr and exit code land in files under $OUT named after `name`. */
const DELTA = (name: string, args: string): string =>
  `node "$BIN" ${args} --format json > "$OUT/${name}.out" 2> "$OUT/${name}.err"; echo $? > "$OUT/${name}.code"`;

interface Captured {
  exitCode: number;
  json: { status: string; error?: { type: string; message: string }; result?: unknown };
  stderr: string;
}

function captured(out: string, name: string): Captured {
  return {
    exitCode: Number(readFileSync(join(out, `${name}.code`), "utf8")),
    json: JSON.parse(readFileSync(join(out, `${name}.out`), "utf8")),
    stderr: readFileSync(join(out, `${name}.err`), "utf8"),
  };
}

function expectNoStackTrace(result: Captured): void {
  expect(result.stderr).not.toMatch(CRASH_TRACE);
}

function journalStatus(deltaDir: string, runId: string): string {
  return deriveRunState(readJournal(join(deltaDir, runId, "journal.jsonl"))).status;
}

describe.concurrent("disk faults", () => {
  it("fails a run cleanly (exit 1, DISK_FULL) when the disk fills up, and continue completes it once there is room", async (context) => {
    if (unsupported) context.skip();
    const server = await startMockLlm([reply.toolCalls([{ name: "fill", arguments: { bytes: "4000000" } }]), reply.text("recovered")]);
    const agent = writeAgent(root, { tools: 'tools:\n  - name: fill\n    shell: "head -c ${bytes} /dev/zero > filler; echo filled"\n' }, "agent-full");
    const ws = join(root, "ws-full");
    const out = join(root, "out-full");
    mkdirSync(ws);
    mkdirSync(out);
    try {
      const script = [
        'mount -t tmpfs -o size=256k tmpfs "$WS"',
        DELTA("run", 'run --agent "$AGENT" -w "$WS" --run-id full -m "fill the disk"'),
        'cp -a "$WS/.delta" "$OUT/failed"',
        'rm -f "$WS/filler"',
        DELTA("continue", 'continue --run-id full -w "$WS" -m "there is room again"'),
        'cp -a "$WS/.delta" "$OUT/resumed"',
      ].join("\n");
      const ns = await inMountNamespace(script, [], { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), WS: ws, OUT: out, BIN: DELTA_BIN, AGENT: agent });
      expect(ns.stderr).toBe("");

      const run = captured(out, "run");
      expect(run.exitCode).toBe(1);
      expect(run.json.status).toBe("FAILED");
      expect(run.json.error?.type).toBe("DISK_FULL");
      expect(run.json.error?.message).toMatch(/ENOSPC|no space/i);
      expect(run.json.error?.message).toMatch(/free some space, then `delta continue`/);
      expectNoStackTrace(run);
      // The run's own outcome, not a bare refusal: the engine finished the run. Marking its owner record released
      // needs a few bytes the full disk may not have; unmarked, the record names a process that is gone, which the
      // continue below judges so and takes over.
      expect(run.json).toMatchObject({ run_id: "full", metadata: { agent_name: "test-agent" } });
      expect(JSON.parse(readFileSync(join(out, "failed", "full", ".lock", "1.json"), "utf8"))).toMatchObject({ generation: 1 });
      expect(journalStatus(join(out, "failed"), "full")).toBe("FAILED");

      const resumed = captured(out, "continue");
      expectNoStackTrace(resumed);
      expect(resumed.exitCode).toBe(0);
      expect(resumed.json).toMatchObject({ status: "COMPLETED", result: "recovered" });
      expect(journalStatus(join(out, "resumed"), "full")).toBe("COMPLETED");
    } finally {
      await server.close();
    }
  });

  it("refuses a read-only workspace with 126 and WORKSPACE_ERROR, for new runs and for continue, leaving the journal as it was", async (context) => {
    if (unsupported) context.skip();
    const server = await startMockLlm([reply.text("first answer")]);
    const agent = writeAgent(root, {}, "agent-ro");
    const ws = join(root, "ws-ro");
    const out = join(root, "out-ro");
    mkdirSync(ws);
    mkdirSync(out);
    try {
      const script = [
        'mount -t tmpfs -o size=1m tmpfs "$WS"',
        DELTA("first", 'run --agent "$AGENT" -w "$WS" --run-id ro1 -m go'),
        'cp "$WS/.delta/ro1/journal.jsonl" "$OUT/journal.before"',
        'mount -o remount,ro "$WS"',
        DELTA("continue", 'continue --run-id ro1 -w "$WS" -m again'),
        DELTA("fresh", 'run --agent "$AGENT" -w "$WS" --run-id ro2 -m go'),
        DELTA("sub", 'run --agent "$AGENT" -w "$WS/sub" --run-id ro3 -m go'),
        'cp -a "$WS/.delta" "$OUT/after"',
      ].join("\n");
      const ns = await inMountNamespace(script, [], { ...NO_MODEL_KEYS, ...modelEnv(server.baseUrl), WS: ws, OUT: out, BIN: DELTA_BIN, AGENT: agent });
      expect(ns.stderr).toBe("");
      expect(captured(out, "first").exitCode).toBe(0);

      for (const name of ["continue", "fresh", "sub"]) {
        const refused = captured(out, name);
        expect(refused.exitCode, name).toBe(126);
        expect(refused.json.error?.type, name).toBe("WORKSPACE_ERROR");
        expect(refused.json.error?.message, name).toMatch(/EROFS|read-only/i);
        expect(refused.stderr, name).toMatch(/^Error: .*(EROFS|read-only)/i);
        expectNoStackTrace(refused);
      }
      expect(readFileSync(join(out, "after", "ro1", "journal.jsonl"), "utf8")).toBe(readFileSync(join(out, "journal.before"), "utf8"));
      expect(journalStatus(join(out, "after"), "ro1")).toBe("COMPLETED");
      expect(existsSync(join(out, "after", "ro2"))).toBe(false);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
