// Before a run leaves any trace: a run that asks for a sandbox the machine cannot give is refused with the fixes, and --sandbox off is said aloud.
import { realpathSync } from "node:fs";
import { SandboxUnavailableError } from "../../errors.js";
import { engineCodeFolders } from "./engine-code.js";
import { probeSandbox } from "./probe.js";
import { asksForSandbox, hookPolicy, needsSandbox, serverPolicy, toolPolicy, type BoxedAgent } from "./policy.js";
import type { RunSandbox } from "./policy-schema.js";

const FIXES: Record<"platform" | "no-bwrap" | "namespaces", string> = {
  platform: "run the agent on Linux, or inside a container that is itself the box and pass --sandbox off",
  "no-bwrap": "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap), or inside a container that is itself the box pass --sandbox off",
  namespaces:
    "allow unprivileged user namespaces (sysctl user.max_user_namespaces=15000; on Ubuntu also kernel.apparmor_restrict_unprivileged_userns=0; " +
    "in Docker, run with --security-opt seccomp=unconfined or use a runtime that allows them), or inside a container that is itself the box pass --sandbox off",
};

export async function checkSandbox(sandbox: RunSandbox, agent: Pick<BoxedAgent, "tools" | "mcpServers"> & { configPath: string }, warn: (line: string) => void): Promise<void> {
  if (sandbox.override === "off" && asksForSandbox(sandbox)) {
    warn(`[warning] --sandbox off: ${agent.configPath} asks for a sandbox, and this run's tools and MCP servers run unboxed, with all your rights`);
  }
  if (!needsSandbox(sandbox, agent)) return;
  const unavailable = await probeSandbox();
  if (unavailable === null) return;
  const fix = unavailable.cause === "nested"
    ? "run the inner agent with --sandbox off: the tool that runs it is boxed already, and the inner run stays inside that box"
    : FIXES[unavailable.cause];
  throw new SandboxUnavailableError(`${agent.configPath} asks for a sandbox, and this machine cannot make one: ${unavailable.detail}. Nothing was run. Fix: ${fix}.`);
}

/**
 * A workspace that is the engine's own package (its clone, or a package it loads) cannot be boxed writable either:
 * the box keeps the engine's code read-only wherever it lies (engine-code.ts).
 * A workspace that is the agent's own folder cannot be boxed writable: the box keeps the agent's folder
 * read-only over a workspace above it, but when the two are one folder no bind can keep agent.yaml,
 * hooks.yaml, the prompts and the scripts the tools, hooks and generators run read-only while the
 * workspace stays writable (a tool that rewrote hooks.yaml would have its hook run unboxed by the next
 * `continue`). Refused before anything runs, with the fixes.
 */
export function checkBoxLayout(sandbox: RunSandbox, agent: Pick<BoxedAgent, "tools" | "mcpServers"> & { configPath: string; home: string }, workDir: string): void {
  const policies = [
    ...agent.tools.map((tool) => toolPolicy(sandbox, tool.name)),
    ...agent.mcpServers.flatMap((server) => (server.command === undefined ? [] : [serverPolicy(sandbox, server.name)])),
    hookPolicy(sandbox),
  ];
  if (!policies.some((policy) => policy?.mode === "workspace-write")) return;
  const workspace = realOrGiven(workDir);
  if (engineCodeFolders().includes(workspace)) {
    throw new SandboxUnavailableError(
      `${agent.configPath} boxes tools with mode workspace-write, and the workspace ${workDir} is the engine's own code: a tool could rewrite ` +
        "the delta that a later continue runs unboxed, so the box keeps it read-only and no tool could write there. Nothing was run. Fix: give the run " +
        "a workspace of its own (-w another folder), or box the tools read-only (--sandbox read-only).",
    );
  }
  if (workspace !== realOrGiven(agent.home)) return;
  throw new SandboxUnavailableError(
    `${agent.configPath} boxes tools with mode workspace-write, and the workspace ${workDir} is the agent's own folder: a tool could rewrite the agent's ` +
      "hooks.yaml, tools and prompts, which the engine reads and runs unboxed. Nothing was run. Fix: give the run a workspace of its own " +
      "(-w a folder outside the agent's folder, or no -w: the engine makes workspaces/W001 inside it), or box the tools read-only (--sandbox read-only).",
  );
}

function realOrGiven(target: string): string {
  try {
    return realpathSync(target);
  } catch {
    return target;
  }
}
