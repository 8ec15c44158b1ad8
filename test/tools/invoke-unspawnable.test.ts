// Arguments no process can receive (a NUL byte, one over the kernel's size limit) become an ERROR observation, never a throw.
import { describe, expect, it } from "vitest";
import { invokeTool } from "../../src/tools/invoke.js";
import { REPO } from "../e2e/harness.js";

describe("invokeTool with arguments that cannot be passed to a process", () => {
  it("reports a NUL byte in an argument as a tool that could not be started", async () => {
    const result = await invokeTool({ argv: ["printf", "%s", "a\u0000b"], cwd: REPO, env: {}, timeoutMs: 5_000 });
    expect(result.status).toBe("ERROR");
    expect(result.observation).toMatch(/could not start printf: .*null bytes/);
  });

  it("reports an argument beyond the kernel's per-argument limit as a spawn error", async () => {
    const result = await invokeTool({ argv: ["printf", "%s", "x".repeat(200_000)], cwd: REPO, env: {}, timeoutMs: 5_000 });
    expect(result.status).toBe("ERROR");
    expect(result.observation).toMatch(/E2BIG/);
  });
});
