// A workspace that is the agent's own folder, or the engine's own code, cannot be boxed writable: refused with the fixes; every other layout, and a read-only box, goes on.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SandboxUnavailableError } from "../../../src/errors.js";
import { engineCodeFolders, enginePackage } from "../../../src/process/sandbox/engine-code.js";
import { checkBoxLayout } from "../../../src/process/sandbox/check.js";
import type { RunSandbox } from "../../../src/process/sandbox/policy-schema.js";

let root: string;
let home: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "delta-layout-"));
  home = join(root, "agent");
  mkdirSync(join(home, "W001"), { recursive: true });
  symlinkSync(home, join(root, "link-to-agent"));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const WRITABLE: RunSandbox = { agent: { mode: "workspace-write" }, tools: {}, mcp_servers: {} };

function agent(): Parameters<typeof checkBoxLayout>[1] {
  return { home, configPath: join(home, "agent.yaml"), tools: [{ name: "run" }] as never, mcpServers: [] };
}

describe("checkBoxLayout", () => {
  it("refuses the agent's own folder as the workspace of a writable box, by any path to it, naming the fixes", () => {
    for (const workDir of [home, join(root, "link-to-agent")]) {
      expect(() => checkBoxLayout(WRITABLE, agent(), workDir)).toThrow(SandboxUnavailableError);
    }
    expect(() => checkBoxLayout(WRITABLE, agent(), home)).toThrow(/is the agent's own folder: a tool could rewrite the agent's hooks.yaml.*-w a folder outside the agent's folder.*--sandbox read-only/);
  });

  it("refuses the engine's own package, or a package it loads, as the workspace of a writable box; a workspace inside it goes on", () => {
    expect(() => checkBoxLayout(WRITABLE, agent(), enginePackage())).toThrow(/is the engine's own code: a tool could rewrite the delta that a later continue runs unboxed.*-w another folder.*--sandbox read-only/);
    const loaded = engineCodeFolders().find((folder) => folder.endsWith("gpt-tokenizer"));
    expect(loaded).toBeDefined();
    expect(() => checkBoxLayout(WRITABLE, agent(), loaded!)).toThrow(SandboxUnavailableError);
    expect(() => checkBoxLayout({ ...WRITABLE, override: "read-only" }, agent(), enginePackage())).not.toThrow();
    expect(() => checkBoxLayout(WRITABLE, agent(), join(enginePackage(), "examples", "hello-world"))).not.toThrow();
  });

  it("lets a workspace inside or above the agent's folder, a read-only box, --sandbox off and a run without a box go on", () => {
    expect(() => checkBoxLayout(WRITABLE, agent(), join(home, "W001"))).not.toThrow();
    expect(() => checkBoxLayout(WRITABLE, agent(), root)).not.toThrow();
    expect(() => checkBoxLayout({ ...WRITABLE, override: "read-only" }, agent(), home)).not.toThrow();
    expect(() => checkBoxLayout({ ...WRITABLE, override: "off" }, agent(), home)).not.toThrow();
    expect(() => checkBoxLayout({ agent: null, tools: {}, mcp_servers: {} }, agent(), home)).not.toThrow();
  });

  it("counts a writable box of one tool, or of hooks and generators, as the agent's would", () => {
    expect(() => checkBoxLayout({ agent: null, tools: { run: { mode: "workspace-write" } }, mcp_servers: {} }, agent(), home)).toThrow(SandboxUnavailableError);
    expect(() => checkBoxLayout({ agent: { mode: "workspace-write", hooks: true }, tools: { run: { mode: "read-only" } }, mcp_servers: {} }, agent(), home)).toThrow(SandboxUnavailableError);
  });
});
