// `delta init -t <template>` for each template: every file explains itself, the agent loads, and it runs against the scripted model.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { JournalEvent } from "../../src/journal/events.js";
import { delta, eventTypes, modelEnv, readEvents, setUpE2e } from "../e2e/harness.js";
import { reply, startMockLlm, type Step } from "../support/mock-llm.js";

interface TemplateCase {
  template: string;
  script: Step[];
  /** Checks the tool results, in order, and the files the tools made. */
  check(results: [string, string, string][], workDir: string): void;
}

const cases: TemplateCase[] = [
  {
    template: "minimal",
    script: [reply.toolCalls([{ name: "current_date", arguments: {} }]), reply.text("It is today.")],
    check(results) {
      expect(results).toHaveLength(1);
      expect(results[0]![0]).toBe("current_date");
      expect(results[0]![1]).toBe("SUCCESS");
      expect(results[0]![2]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
    },
  },
  {
    template: "hello-world",
    script: [
      reply.toolCalls([{ name: "write_file", arguments: { path: "hello.txt", content: "hello\nworld\n" } }]),
      reply.toolCalls([
        { name: "count_lines", arguments: { path: "hello.txt" } },
        { name: "read_file", arguments: { path: "hello.txt" } },
        { name: "list_files", arguments: {} },
      ]),
      reply.text("Wrote hello.txt (2 lines)."),
    ],
    check(results, workDir) {
      expect(results.map(([name, status]) => [name, status])).toEqual([
        ["write_file", "SUCCESS"], ["count_lines", "SUCCESS"], ["read_file", "SUCCESS"], ["list_files", "SUCCESS"],
      ]);
      expect(results[1]![2].trim()).toBe("2");
      expect(results[2]![2]).toBe("hello\nworld\n");
      expect(results[3]![2]).toMatch(/ hello\.txt\n/);
      expect(readFileSync(join(workDir, "hello.txt"), "utf8")).toBe("hello\nworld\n");
    },
  },
];

const { root } = setUpE2e("delta-templates-");

describe.concurrent("delta init templates", () => {
  for (const { template, script, check } of cases) {
    it(`${template}: init, explained files, tool expand, a run against the model`, async () => {
      const cwd = join(root, template);
      mkdirSync(cwd);
      const made = await delta(["init", "my-agent", "-t", template, "-y"], { cwd });
      expect(made.exitCode, made.stderr).toBe(0);
      const home = join(cwd, "my-agent");

      const agentYaml = readFileSync(join(home, "agent.yaml"), "utf8");
      const contextYaml = readFileSync(join(home, "context.yaml"), "utf8");
      const prompt = readFileSync(join(home, "system_prompt.md"), "utf8");
      expect(agentYaml).toMatch(/^# [\s\S]*# What to edit:\n/);
      expect(agentYaml).toContain("name: my-agent");
      // After the line that points editors at the schema, the file explains itself.
      expect(contextYaml).toMatch(/^# yaml-language-server: \$schema=\S+\n# context\.yaml: [\s\S]*# What to edit:\n/);
      expect(prompt).toMatch(/^<!--\nsystem_prompt\.md: [\s\S]*Edit it [\s\S]*-->\n/);

      const expand = await delta(["tool", "expand", "my-agent"], { cwd });
      expect(expand.exitCode, expand.stderr).toBe(0);
      expect(expand.stdout).toMatch(/^tools:\n/);

      const server = await startMockLlm(script);
      try {
        const run = await delta(["run", "--agent", "my-agent", "-y", "--run-id", "first", "--format", "json", "-m", "try your tools"], { cwd, env: modelEnv(server.baseUrl) });
        expect(run.exitCode, run.stderr).toBe(0);
        expect(JSON.parse(run.stdout)).toMatchObject({ status: "COMPLETED", metadata: { agent_name: "my-agent" } });
        const workDir = join(home, "workspaces", "W001");
        const events: JournalEvent[] = readEvents(workDir, "first");
        expect(eventTypes(events).at(-1)).toBe("ENGINE_END");
        check(events.flatMap((e) => (e.type === "ACTION_RESULT" ? [[e.tool_name, e.status, e.observation_content] as [string, string, string]] : [])), workDir);
        // The prompt the model got is the template's system_prompt.md, comment and all.
        const firstRequest = server.requests[0]!.body as { messages: { role: string; content: string }[] };
        expect(firstRequest.messages[0]).toEqual({ role: "system", content: prompt });
      } finally {
        await server.close();
      }
    });
  }
});

