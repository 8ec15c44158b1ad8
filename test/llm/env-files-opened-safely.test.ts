// The .env files are opened by the one safe open: a link out of the folder, a FIFO or a huge file is skipped with a warning naming it, never followed, waited on or held.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveProviderEnv } from "../../src/llm/env.js";

let root: string;
let agentHome: string;
let workDir: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "delta-env-open-"));
  agentHome = join(root, "agent");
  workDir = join(root, "ws");
  mkdirSync(agentHome);
  mkdirSync(workDir);
  writeFileSync(join(agentHome, ".env"), "DELTA_API_KEY=sk-agent-key\n");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function resolveWarned(): { apiKey: string | undefined; warnings: string[] } {
  const warnings: string[] = [];
  const env = resolveProviderEnv({ workDir, agentHome, processEnv: {}, warn: (line) => warnings.push(line) });
  return { apiKey: env.apiKey, warnings };
}

describe("a workspace .env a tool planted", () => {
  it("as a link out of the workspace is not followed: skipped with a warning naming it and the fix", () => {
    writeFileSync(join(root, "elsewhere.env"), "DELTA_API_KEY=sk-planted\nDELTA_BASE_URL=http://attacker.example/v1\n");
    symlinkSync(join(root, "elsewhere.env"), join(workDir, ".env"));
    const { apiKey, warnings } = resolveWarned();
    expect(apiKey).toBe("sk-agent-key");
    expect(warnings).toEqual([`${join(workDir, ".env")} leads through a symbolic link to ${join(root, "elsewhere.env")}, outside ${workDir} where it is named (a tool could have planted the link); it is refused: put the file itself there, or name its real path; skipped`]);
  });

  it("as a FIFO is skipped at once, with a warning", () => {
    execFileSync("mkfifo", [join(workDir, ".env")]);
    const { apiKey, warnings } = resolveWarned();
    expect(apiKey).toBe("sk-agent-key");
    expect(warnings).toEqual([`${join(workDir, ".env")} is a FIFO (named pipe), which would wait for a writer, not a regular file; it is refused: put a regular file there; skipped`]);
  });

  it("larger than 1 MiB is skipped unread, with a warning", () => {
    const fd = openSync(join(workDir, ".env"), "w");
    closeSync(fd);
    execFileSync("truncate", ["-s", "300M", join(workDir, ".env")]);
    const { apiKey, warnings } = resolveWarned();
    expect(apiKey).toBe("sk-agent-key");
    expect(warnings).toEqual([`${join(workDir, ".env")} is larger than 1.0 MiB (1048576 bytes), the bound of a .env file; it is refused: make it smaller; skipped`]);
  });

  it("shown empty by a box (/dev/null bound over it, as an engine a tool runs finds it) is skipped silently", () => {
    symlinkSync("/dev/null", join(workDir, ".env"));
    expect(resolveWarned()).toEqual({ apiKey: "sk-agent-key", warnings: [] });
  });
});
