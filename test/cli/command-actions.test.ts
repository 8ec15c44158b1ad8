// The commands whose first word is an action (mcp serve, budget init|show|set, tool expand|list, skills list, schema agent|context|hooks): a mistyped action gets the nearest one, and the agent is named once.
import { describe, expect, it } from "vitest";
import { buildCli, type Handler } from "../../src/cli/command-table.js";
import type { CliIo } from "../../src/cli/io.js";
import { UsageError } from "../../src/errors.js";

const table = buildCli();
const io: CliIo = { out: () => undefined, err: () => undefined, data: () => undefined };

/** The message a command's action refuses these words and flags with. */
async function refusal(command: string, args: (string | undefined)[], flags: Record<string, unknown> = {}): Promise<string> {
  const action = table.commands.find((candidate) => candidate.name === command)!.commandAction as Handler;
  const refused = await action(args, flags, io).then(
    () => null,
    (err: unknown) => err,
  );
  expect(refused).toBeInstanceOf(UsageError);
  return (refused as Error).message;
}

describe("a mistyped action", () => {
  it.each([
    ["mcp", ["serv"], "Unknown mcp action 'serv'. Did you mean serve?"],
    ["budget", ["shwo", "/tmp/ledger"], "Unknown budget action 'shwo'. Did you mean show?"],
    ["budget", ["int", "/tmp/ledger"], "Unknown budget action 'int'. Did you mean init?"],
    ["tool", ["expnd", "agent"], "Unknown tool action 'expnd'. Did you mean expand?"],
    ["tool", ["lst", "agent"], "Unknown tool action 'lst'. Did you mean list?"],
    ["skills", ["lsit", undefined], "Unknown skills action 'lsit'. Did you mean list?"],
    ["schema", ["agnt"], "Unknown schema 'agnt'. Did you mean agent?"],
  ] as const)("delta %s %j is refused with the nearest action", async (command, args, message) => {
    expect(await refusal(command, [...args])).toContain(message);
  });
});

describe("the agent of tool and skills", () => {
  it("given as the path and as --agent, two different ones are refused naming both, never one dropped", async () => {
    expect(await refusal("tool", ["list", "./one"], { agent: "./two" })).toBe("delta tool list was given two agents: ./one and --agent ./two; give one of them.");
    expect(await refusal("tool", ["expand", "./one"], { agent: "./two" })).toBe("delta tool expand was given two agents: ./one and --agent ./two; give one of them.");
    expect(await refusal("skills", ["list", "./one"], { agent: "./two" })).toBe("delta skills list was given two agents: ./one and --agent ./two; give one of them.");
    expect(await refusal("tool", ["list", undefined], { agent: ["./one", "./two"] })).toBe("--agent was given more than once; give it once.");
  });
});
