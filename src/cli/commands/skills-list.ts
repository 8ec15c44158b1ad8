// `delta skills list --agent A`: each skill the agent lists for its model — name, size of its SKILL.md, folder and description — as text or JSON.
import { humanBytes } from "../../byte-size.js";
import { agentHomeOf } from "../../agent/agent-home.js";
import { loadAgent } from "../../agent/load.js";
import { listingBytes } from "../../context/skills-listing.js";
import type { CliIo } from "../io.js";
import { parseFormat } from "../options.js";

export async function skillsList(target: string, flags: Record<string, unknown>, io: CliIo): Promise<number> {
  const format = parseFormat(flags.format, ["text", "json"]);
  const agent = await loadAgent(await agentHomeOf(target, "skills list"), { warn: (message) => io.err(`${message}\n`) });
  const skills = agent.skills.map((skill) => ({ name: skill.name, description: skill.description, bytes: skill.size, path: skill.display }));
  if (format === "json") {
    io.data(`${JSON.stringify(skills, null, 2)}\n`);
    return 0;
  }
  if (skills.length === 0) {
    io.err(agent.context.sources.some((source) => source.type === "skills") ? "No skills: the folders of context.yaml's skills sources hold none\n" : "No skills: context.yaml has no source of type skills\n");
    return 0;
  }
  const width = Math.max(...skills.map((skill) => skill.name.length));
  const sizes = skills.map((skill) => humanBytes(skill.bytes));
  const sizeWidth = Math.max(...sizes.map((text) => text.length));
  io.out(skills.map((skill, index) => `${skill.name.padEnd(width)}  ${sizes[index]!.padStart(sizeWidth)}  ${skill.path}\n${" ".repeat(width + 2)}${skill.description.replace(/\s+/g, " ").trim()}\n`).join(""));
  const listed = [...agent.skillListings.values()].reduce((sum, listing) => sum + listingBytes(listing), 0);
  io.out(`${skills.length} skill${skills.length === 1 ? "" : "s"}; every request lists them in ${listed} bytes\n`);
  return 0;
}

