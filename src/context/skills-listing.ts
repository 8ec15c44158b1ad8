// The text a `skills` source puts in every request: a paragraph on load_skill, then one line per skill with its name and description.
import { Buffer } from "node:buffer";

interface ListedSkill {
  name: string;
  description: string;
}

/** The built-in tool that reads a skill; offered only to agents that list skills. */
export const LOAD_SKILL = "load_skill";

const PREAMBLE =
  `Skills: each one below is a folder of instructions for one kind of task. Before doing a task a skill covers, call ${LOAD_SKILL} ` +
  `with its name to read its instructions, and with a file when they point to one of the skill's files. Reading a skill runs nothing.`;

/** The listing of these skills, or "" for none; a description's line breaks and runs of spaces become single spaces. */
export function skillsListing(skills: readonly ListedSkill[]): string {
  if (skills.length === 0) return "";
  const lines = skills.map((skill) => `- ${skill.name}: ${oneLine(skill.description)}`);
  return `${PREAMBLE}\n\n${lines.join("\n")}\n`;
}

/** Bytes of the listing as sent (UTF-8). */
export function listingBytes(listing: string): number {
  return Buffer.byteLength(listing, "utf8");
}

/** A skill's line in the listing, in bytes: what it costs every request. */
export function skillLineBytes(skill: ListedSkill): number {
  return Buffer.byteLength(`- ${skill.name}: ${oneLine(skill.description)}\n`, "utf8");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
