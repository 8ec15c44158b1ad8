// examples/mcp-filesystem: the README's command, as written, runs the reference MCP filesystem server through npx, offline.
import { execa } from "execa";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import type { EventOf } from "../../src/journal/events.js";
import { NO_MODEL_KEYS, REPO, readEvents, readMetadataFile, removeDir } from "../e2e/harness.js";
import { groupEmptiesSoon } from "../support/processes.js";
import { EXAMPLES } from "./helpers.js";

const AGENT = join(EXAMPLES, "mcp-filesystem");
const WORKSPACES = join(AGENT, "workspaces");
const made: string[] = [];
afterAll(() => made.forEach(removeDir));

function workspaceNames(): string[] {
  return existsSync(WORKSPACES) ? readdirSync(WORKSPACES).filter((name) => /^W\d+$/.test(name)) : [];
}

/** The README's first sh command. */
function readmeCommand(): string {
  const block = /^```sh\n([\s\S]*?)^```/m.exec(readFileSync(join(AGENT, "README.md"), "utf8"));
  return block![1]!.split("\n")[0]!;
}

it("runs on the recording: the server's tools write and list the checklist, beside an exec tool, all journaled", async () => {
  const command = readmeCommand();
  expect(command).toMatch(/^npx delta run --agent examples\/mcp-filesystem -y --replay examples\/mcp-filesystem\/recording\.jsonl -m /);
  const before = workspaceNames();
  // npm_config_offline: npx must find the server in node_modules, never on the registry.
  const run = await execa("bash", ["-c", command], {
    cwd: REPO,
    env: { ...NO_MODEL_KEYS, npm_config_offline: "true" },
    reject: false,
    stdin: "ignore",
    timeout: 120_000,
  });
  const created = workspaceNames().filter((name) => !before.includes(name));
  made.push(...created.map((name) => join(WORKSPACES, name)));
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout).toContain("Status:     COMPLETED");

  expect(created).toHaveLength(1);
  const workDir = join(WORKSPACES, created[0]!);
  expect(readFileSync(join(workDir, "lists", "picnic.md"), "utf8")).toBe("# Picnic\n- [ ] bread\n- [ ] cheese\n- [ ] strawberries\n- [ ] lemonade\n- [ ] blanket\n");
  const [runId] = readdirSync(join(workDir, ".delta")).filter((name) => name !== "VERSION");
  const events = readEvents(workDir, runId!);
  const requests = events.filter((event): event is EventOf<"ACTION_REQUEST"> => event.type === "ACTION_REQUEST");
  expect(requests.map((event) => event.resolved_command)).toEqual([
    ["mcp", "files", "create_directory"],
    ["mcp", "files", "write_file"],
    ["mcp", "files", "list_directory"],
    ["wc", "-l", "--", "lists/picnic.md"],
  ]);
  const results = events.filter((event): event is EventOf<"ACTION_RESULT"> => event.type === "ACTION_RESULT");
  expect(results.map((event) => [event.status, event.observation_content])).toEqual([
    ["SUCCESS", "Successfully created directory lists"],
    ["SUCCESS", "Successfully wrote to lists/picnic.md"],
    ["SUCCESS", "[FILE] picnic.md"],
    ["SUCCESS", "6 lists/picnic.md\n"],
  ]);
  const [server] = readMetadataFile(workDir, runId!).mcp_server_processes as { pid: number }[];
  expect(await groupEmptiesSoon(server!.pid)).toBe(true);
});
