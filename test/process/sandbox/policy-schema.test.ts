// The sandbox: policy as agent.yaml writes it, and as show and the report describe a journaled one.
import { describe, expect, it } from "vitest";
import { describeJournaledSandbox, SandboxPolicySchema } from "../../../src/process/sandbox/policy-schema.js";

describe("SandboxPolicySchema", () => {
  it("takes a mode, write and deny_read paths, and network off, on or a host list", () => {
    expect(SandboxPolicySchema.parse({ mode: "workspace-write", write: ["~/.cache/pip"], network: ["api.github.com", "localhost:8080", "*.pypi.org", "[::1]:80"] })).toMatchObject({ mode: "workspace-write" });
    expect(SandboxPolicySchema.parse({ mode: "read-only", network: "on" }).network).toBe("on");
  });

  it("refuses an unknown mode, a URL as a host, an empty host list and unknown fields, saying what to write", () => {
    const message = (value: unknown): string => SandboxPolicySchema.safeParse(value).error?.issues.map((issue) => issue.message).join("; ") ?? "";
    expect(message({ mode: "strict" })).toContain("mode is one of read-only, workspace-write or off");
    expect(message({ mode: "read-only", network: ["https://api.github.com"] })).toContain("each network entry is host, host:port or *.domain");
    expect(message({ mode: "read-only", network: [] })).toContain("an empty host list is network: off");
    expect(SandboxPolicySchema.safeParse({ mode: "off", writable: ["/x"] }).success).toBe(false);
  });
});

describe("describeJournaledSandbox", () => {
  it("says none for a run without a sandbox, and the policies and the run's mode otherwise", () => {
    expect(describeJournaledSandbox("none")).toBe("none");
    expect(describeJournaledSandbox(undefined)).toBe("none");
    expect(
      describeJournaledSandbox({ agent: { mode: "workspace-write" }, tools: { fetch: { mode: "workspace-write", network: ["api.github.com"] } }, mcp_servers: { files: { mode: "off" } }, override: "read-only" }),
    ).toBe("workspace-write, no network · own: fetch: workspace-write, network api.github.com; files: off · --sandbox read-only");
  });
});
