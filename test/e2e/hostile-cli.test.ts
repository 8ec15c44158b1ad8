// Hostile input through the real binary: the documented exit code, a message naming the file or field, no stack trace, nothing executed or written where it should not be.
import fc from "fast-check";
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reply, startMockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, removeDir, tempDir, writeAgent, type DeltaResult } from "./harness.js";

const SEED = Number(process.env.DELTA_PROPERTY_SEED ?? 1123);
let root: string;
let ran = 0;

beforeAll(() => {
  root = tempDir("delta-hostile-cli-");
});
afterAll(() => {
  console.log(`hostile CLI (seed ${SEED}): ${ran} cases through the binary`);
  removeDir(root);
});

async function cli(args: string[], env: Record<string, string> = {}): Promise<DeltaResult> {
  ran += 1;
  const result = await delta(args, { env });
  expect(result.stderr).not.toMatch(/Internal error|\n\s+at .+:\d+:\d+/);
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
});
