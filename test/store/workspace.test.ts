import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../../src/errors.js";
import { rememberLastUsed, removeCreatedWorkspace, resolveWorkspace, type WorkspaceRequest } from "../../src/store/workspace.js";
import { bundleScript } from "../support/script-bundle.js";

let agentHome: string;
beforeEach(() => {
  agentHome = realpathSync(mkdtempSync(join(tmpdir(), "workspace-")));
});
afterEach(() => rmSync(agentHome, { recursive: true, force: true }));

/** What `delta run` does once the run is sure to start. */
const resolveAndRemember = async (request: WorkspaceRequest) => {
  const workspace = await resolveWorkspace(request);
  rememberLastUsed(request.agentHome, workspace);
  return workspace;
};
const lastUsed = (): string => readFileSync(join(agentHome, "workspaces", "LAST_USED"), "utf8").trim();
const neverAsk = async (): Promise<string> => {
  throw new Error("must not prompt");
};

describe("resolveWorkspace without -w", () => {
  it("allocates W001, W002, … and records the last one used", async () => {
    const first = await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    const second = await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    // The first run of an agent made workspaces/ too: a refused run removes both.
    expect(first).toEqual({ workDir: join(agentHome, "workspaces", "W001"), workspaceId: "W001", created: true, createdFrom: join(agentHome, "workspaces") });
    expect(second.workspaceId).toBe("W002");
    expect(lastUsed()).toBe("W002");
    expect(readdirSync(join(agentHome, "workspaces")).sort()).toEqual(["LAST_USED", "W001", "W002"]);
  });

  it("numbers after the highest existing workspace", async () => {
    mkdirSync(join(agentHome, "workspaces", "W007"), { recursive: true });
    mkdirSync(join(agentHome, "workspaces", "notes"));
    expect((await resolveAndRemember({ agentHome, yes: true, isTTY: false })).workspaceId).toBe("W008");
  });

  it("creates a new workspace without asking when there is no terminal or -y is given", async () => {
    await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    expect((await resolveAndRemember({ agentHome, yes: false, isTTY: false, prompt: neverAsk })).workspaceId).toBe("W002");
    expect((await resolveAndRemember({ agentHome, yes: true, isTTY: true, prompt: neverAsk })).workspaceId).toBe("W003");
  });

  it("offers the last used workspace on a terminal and reuses it when chosen", async () => {
    await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    const questions: string[] = [];
    const chosen = await resolveAndRemember({ agentHome, yes: false, isTTY: true, prompt: async (question) => (questions.push(question), "1") });
    expect(chosen).toEqual({ workDir: join(agentHome, "workspaces", "W001"), workspaceId: "W001", created: false });
    expect(questions[0]).toContain("[N] new workspace");
    expect(questions[0]).toContain("W001 (last used)");
  });

  it("creates a new workspace on an empty answer", async () => {
    await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    const chosen = await resolveAndRemember({ agentHome, yes: false, isTTY: true, prompt: async () => "" });
    expect(chosen.workspaceId).toBe("W002");
    expect(lastUsed()).toBe("W002");
  });

  it("gives up with a usage error after repeated unrecognised answers", async () => {
    await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    await expect(resolveWorkspace({ agentHome, yes: false, isTTY: true, prompt: async () => "maybe" })).rejects.toThrow(UsageError);
  });

  it("leaves LAST_USED alone until the run is sure to start", async () => {
    await resolveAndRemember({ agentHome, yes: true, isTTY: false });
    const refused = await resolveWorkspace({ agentHome, yes: true, isTTY: false });
    removeCreatedWorkspace(refused);
    expect(lastUsed()).toBe("W001");
    expect(readdirSync(join(agentHome, "workspaces")).sort()).toEqual(["LAST_USED", "W001"]);
  });

  it("removes the workspaces folder it made for a refused first run", async () => {
    removeCreatedWorkspace(await resolveWorkspace({ agentHome, yes: true, isTTY: false }));
    expect(readdirSync(agentHome)).toEqual([]);
  });

  it("gives distinct workspaces to 8 processes allocating at once", async () => {
    const script = await bundleScript(
      join(agentHome, "allocate.cjs"),
      `import { rememberLastUsed, resolveWorkspace } from ${JSON.stringify(resolve("src/store/workspace.ts"))};
        resolveWorkspace({ agentHome: process.argv[2], yes: true, isTTY: false }).then((w) => (rememberLastUsed(process.argv[2], w), console.log(w.workspaceId)));`,
    );
    const runs = Array.from({ length: 8 }, () => promisify(execFile)(process.execPath, [script, agentHome]));
    const ids = (await Promise.all(runs)).map((result) => result.stdout.trim()).sort();
    expect(ids).toEqual(["W001", "W002", "W003", "W004", "W005", "W006", "W007", "W008"]);
    expect(ids).toContain(lastUsed());
  });
});

describe("resolveWorkspace with -w", () => {
  it("creates a missing directory with its parents and returns its real path", async () => {
    const target = join(agentHome, "a", "b", "ws");
    const workspace = await resolveWorkspace({ agentHome, workDir: target, yes: false, isTTY: true, prompt: neverAsk });
    expect(workspace).toEqual({ workDir: target, workspaceId: "ws", created: true, createdFrom: join(agentHome, "a") });
    expect(readdirSync(join(agentHome, "a", "b"))).toEqual(["ws"]);
    removeCreatedWorkspace(workspace);
    expect(readdirSync(agentHome)).toEqual([]);
  });

  it("uses an existing directory as it is", async () => {
    mkdirSync(join(agentHome, "ws"));
    const workspace = await resolveWorkspace({ agentHome, workDir: join(agentHome, "ws"), yes: true, isTTY: false });
    expect(workspace.created).toBe(false);
  });

  it("refuses a path that is a file", async () => {
    writeFileSync(join(agentHome, "file"), "");
    await expect(resolveWorkspace({ agentHome, workDir: join(agentHome, "file"), yes: true, isTTY: false })).rejects.toThrow(/is not a directory/);
  });
});
