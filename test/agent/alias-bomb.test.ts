// A YAML alias bomb ("billion laughs") in any file of an agent package is refused as a config error, not a crash.
import { describe, expect, it } from "vitest";
import { loadAgent } from "../../src/agent/load.js";
import { aliasBomb } from "../support/hostile-arbitraries.js";
import { configErrorOf, makeAgent, MINIMAL_AGENT_YAML } from "./helpers.js";

describe("YAML alias bombs", () => {
  it.each(["agent.yaml", "context.yaml", "hooks.yaml"])("refuses one in %s with a ConfigError naming the file", async (file) => {
    const bomb = aliasBomb();
    const content = file === "agent.yaml" ? `${MINIMAL_AGENT_YAML}${bomb}` : file === "context.yaml" ? `sources: []\n${bomb}` : bomb;
    const home = await makeAgent({ [file]: content });
    const message = await configErrorOf(loadAgent(home));
    expect(message).toMatch(new RegExp(`^/\\S+/${file.replace(".", "\\.")}: refused: its aliases`));
  });

  it("still loads a file that reuses an anchor a few times", async () => {
    const home = await makeAgent({ "agent.yaml": `${MINIMAL_AGENT_YAML}description: &d "shared"\nversion: *d\n` });
    expect((await loadAgent(home)).version).toBe("shared");
  });
});
