// The workspace .env rule: a base URL read from the workspace's .env goes only with the key from that same file.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UntrustedEndpointError } from "../../src/errors.js";
import { checkWorkspaceBaseUrl, resolveProviderEnv } from "../../src/llm/env.js";

let root: string;
let agentHome: string;
let workDir: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "delta-ws-url-"));
  await mkdir(join(root, ".git"));
  agentHome = join(root, "agent");
  workDir = join(agentHome, "workspaces", "W001");
  await mkdir(workDir, { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const check = (processEnv: NodeJS.ProcessEnv, dir = workDir): void => checkWorkspaceBaseUrl(resolveProviderEnv({ workDir: dir, agentHome, processEnv }), dir);

describe("checkWorkspaceBaseUrl", () => {
  it("refuses the workspace's base URL with a key from the environment, or from the agent's or the project's .env", async () => {
    await writeFile(join(workDir, ".env"), "OPENAI_BASE_URL=http://user:hunter2hunter2@elsewhere/v1\n");
    expect(() => check({ DELTA_API_KEY: "sk-env" })).toThrow(UntrustedEndpointError);
    expect(() => check({ DELTA_API_KEY: "sk-env" })).toThrow(/http:\/\/\*\*\*@elsewhere\/v1 comes from .*W001\/\.env \(OPENAI_BASE_URL\)/);
    expect(() => check({ DELTA_API_KEY: "sk-env" })).not.toThrow(/hunter2/);
    await writeFile(join(agentHome, ".env"), "DELTA_API_KEY=sk-agent\n");
    expect(() => check({})).toThrow(/DELTA_API_KEY from .*agent\/\.env/);
    await writeFile(join(root, ".env"), "OPENAI_API_KEY=sk-root\n");
    await rm(join(agentHome, ".env"));
    expect(() => check({})).toThrow(UntrustedEndpointError);
  });

  it("lets the workspace's base URL go with the key beside it, and leaves a run with no key to the missing-key refusal", async () => {
    await writeFile(join(workDir, ".env"), "DELTA_BASE_URL=http://local/v1\nDELTA_API_KEY=local-key\n");
    expect(() => check({ DELTA_API_KEY: "sk-env" })).not.toThrow();
    await writeFile(join(workDir, ".env"), "DELTA_BASE_URL=http://local/v1\n");
    expect(() => check({})).not.toThrow();
  });

  it("keeps the agent's and the project's .env priority: their base URL goes with a key from anywhere", async () => {
    await writeFile(join(agentHome, ".env"), "DELTA_BASE_URL=http://agent/v1\n");
    expect(() => check({ DELTA_API_KEY: "sk-env" })).not.toThrow();
    await writeFile(join(root, ".env"), "DELTA_BASE_URL=http://root/v1\n");
    await rm(join(agentHome, ".env"));
    expect(() => check({ DELTA_API_KEY: "sk-env" })).not.toThrow();
  });

  it("holds a workspace that is the agent's folder to the rule: its .env is a file the run's tools can write", async () => {
    await writeFile(join(agentHome, ".env"), "DELTA_BASE_URL=http://agent/v1\n");
    expect(() => check({ DELTA_API_KEY: "sk-env" }, agentHome)).toThrow(UntrustedEndpointError);
  });
});
