// Finds an agent's skills: the folders its `skills` sources name, every SKILL.md validated, within the documented bounds.
import { readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { resolveSourcePath } from "../../context/path-variables.js";
import type { ContextConfig, SkillsSource } from "../../context/schema.js";
import { listingBytes, skillLineBytes, skillsListing } from "../../context/skills-listing.js";
import { ConfigError, errorMessage } from "../../errors.js";
import { displayPath } from "../imports.js";
import { parseSkillDocument } from "./front-matter.js";
import { isWithin, MAX_SKILL_FILE_BYTES, readBoundedText } from "./skill-files.js";

export interface Skill {
  name: string;
  description: string;
  /** The real path of the skill's folder: load_skill reads only inside it. */
  dir: string;
  /** How messages name its SKILL.md: relative to the agent home when inside it. */
  display: string;
  /** Bytes of its SKILL.md. */
  size: number;
}

interface AgentSkills {
  /** Every skills source's skills, in source order; names are unique. */
  skills: Skill[];
  /** Each skills source's listing, by its index in context.yaml. */
  listings: Map<number, string>;
}

/** A folder that should hold a SKILL.md: its name (which the skill's name must equal) and where it really is. */
interface SkillFolder {
  name: string;
  dir: string;
}

/** A folder named by paths: or shared_paths:, resolved. */
interface Root {
  field: string;
  entry: string;
  /** The path as written, expanded and made absolute: its last part names a skill when the folder is one. */
  given: string;
  real: string;
}

/**
 * Reads every `skills` source of context.yaml: a source naming more than `max_skills` skills, or
 * whose listing passes `max_listing_bytes`, is refused with both numbers — never cut. Nothing a
 * skill holds is run.
 */
export function loadSkills(home: string, context: ContextConfig): AgentSkills {
  const skills: Skill[] = [];
  const listings = new Map<number, string>();
  const seen = new Map<string, Skill>();
  for (const [index, source] of context.sources.entries()) {
    if (source.type !== "skills") continue;
    const where = `context.yaml: sources[${index}]`;
    const folders = skillRoots(home, source, where).flatMap((root) => skillFolders(home, root));
    if (folders.length > source.max_skills) {
      throw new ConfigError(
        `${where}: ${folders.length} skills found, more than max_skills ${source.max_skills}: every request lists each one. ` +
          "Remove the skills this agent does not need from its folders, or raise max_skills.",
      );
    }
    const found = folders.map((folder) => readSkill(home, folder));
    for (const skill of found) {
      const earlier = seen.get(skill.name);
      if (earlier) throw new ConfigError(`${skill.display}: the skill '${skill.name}' is already defined by ${earlier.display}; load_skill finds a skill by its name, so rename or remove one`);
      seen.set(skill.name, skill);
    }
    const listing = skillsListing(found);
    const bytes = listingBytes(listing);
    if (bytes > source.max_listing_bytes) {
      const longest = [...found].sort((a, b) => skillLineBytes(b) - skillLineBytes(a)).slice(0, 3).map((skill) => `${skill.name} ${skillLineBytes(skill)}`);
      throw new ConfigError(
        `${where}: the listing of its ${found.length} skills is ${bytes} bytes, more than max_listing_bytes ${source.max_listing_bytes}: every request carries it. ` +
          `Shorten the longest descriptions (bytes: ${longest.join(", ")}), remove skills, or raise max_listing_bytes.`,
      );
    }
    skills.push(...found);
    listings.set(index, listing);
  }
  return { skills, listings };
}

function skillRoots(home: string, source: SkillsSource, where: string): Root[] {
  const roots: Root[] = [];
  for (const [index, entry] of (source.paths ?? []).entries()) {
    const field = `${where}.paths[${index}]`;
    if (entry.includes("${CWD}")) {
      throw new ConfigError(`${field}: '${entry}' uses \${CWD}, but skills are read when the agent loads, before a workspace is chosen; name a folder of the agent directory`);
    }
    const given = resolveSourcePath(entry, { AGENT_HOME: home, CWD: home });
    const real = realFolder(field, entry, given);
    if (real === home || !isWithin(home, real)) {
      throw new ConfigError(
        `${field}: '${entry}' resolves to ${real}, ${real === home ? "the agent directory itself" : `outside the agent directory ${home}`}; ` +
          "paths: name folders inside the agent directory (symlinks are resolved). Move or copy the skills into a folder such as skills/, " +
          "or list the folder's absolute path under shared_paths: to read it where it is.",
      );
    }
    roots.push({ field, entry, given, real });
  }
  for (const [index, entry] of (source.shared_paths ?? []).entries()) {
    const field = `${where}.shared_paths[${index}]`;
    if (!path.isAbsolute(entry)) {
      throw new ConfigError(`${field}: '${entry}' is not an absolute path; shared_paths: name folders by their absolute path (folders of the agent directory go under paths:)`);
    }
    roots.push({ field, entry, given: path.resolve(entry), real: realFolder(field, entry, path.resolve(entry)) });
  }
  return roots;
}

function realFolder(field: string, entry: string, given: string): string {
  let real: string;
  try {
    real = realpathSync(given);
  } catch (err) {
    throw new ConfigError(`${field}: '${entry}' not found (looked for ${given}: ${errorMessage(err)}); create the folder or fix the path`, { cause: err });
  }
  if (!statSync(real).isDirectory()) throw new ConfigError(`${field}: '${entry}' (${real}) is not a folder; name a folder of skill folders, or one skill's folder`);
  return real;
}

/** The root itself when it holds a SKILL.md, else each of its folders whose name does not start with a dot. */
function skillFolders(home: string, root: Root): SkillFolder[] {
  if (exists(path.join(root.real, "SKILL.md"))) return [{ name: path.basename(root.given), dir: root.real }];
  const folders: SkillFolder[] = [];
  const names = readdirSync(root.real).filter((name) => !name.startsWith(".")).sort();
  for (const name of names) {
    const entry = path.join(root.real, name);
    if (!isFolder(entry)) continue;
    const dir = realpathSync(entry);
    if (!isWithin(root.real, dir) || dir === root.real) {
      throw new ConfigError(
        `${displayPath(home, entry)}: this skill folder leads through a symbolic link to ${dir}, outside ${root.real} (${root.field}: '${root.entry}'); ` +
          "a skill must lie inside the folder that lists it. Copy it in, or list its real folder under shared_paths:.",
      );
    }
    folders.push({ name, dir });
  }
  return folders;
}

function readSkill(home: string, folder: SkillFolder): Skill {
  const file = path.join(folder.dir, "SKILL.md");
  const display = displayPath(home, file);
  if (!exists(file)) {
    throw new ConfigError(`${displayPath(home, folder.dir)}: this folder of a skills folder has no SKILL.md; add one (named SKILL.md, in capitals), or move the folder out`);
  }
  const real = realpathSync(file);
  if (!isWithin(folder.dir, real)) throw new ConfigError(`${display}: leads through a symbolic link to ${real}, outside the skill's folder; copy the file in`);
  const read = readBoundedText(folder.dir, real, MAX_SKILL_FILE_BYTES);
  if (!read.ok) throw new ConfigError(`${display}: ${read.problem}; move detail into other files of the skill, which load_skill reads one at a time`);
  const { frontMatter, locate } = parseSkillDocument(read.text, display);
  if (frontMatter.name !== folder.name) {
    throw new ConfigError(`${display}: name: '${frontMatter.name}' differs from its folder's name '${folder.name}'; the format wants them equal — rename the folder or the skill (at ${locate("name")})`);
  }
  return { name: frontMatter.name, description: frontMatter.description, dir: folder.dir, display, size: read.bytes };
}

function exists(target: string): boolean {
  try {
    statSync(target);
    return true;
  } catch {
    return false;
  }
}

function isFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}
