#!/usr/bin/env node
// pre_tool_execution hook: lets a tool call through only when each of its path arguments resolves inside the workspace.
//
// Usage (hooks.yaml): command: ["node", "${AGENT_HOME}/hooks/path-guard.mjs", "path", …]
// The arguments after the script name which tool arguments hold paths (default: "path").
// Reads the hook's JSON on stdin ({hook, run_id, iteration, payload: {id, name, arguments}}).
// Allows by exiting 0 with no output; refuses by printing {"decision":"block","reason":…}.
// Node 18+, no dependencies.
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

const pathArguments = process.argv.length > 2 ? process.argv.slice(2) : ["path"];
const workspace = process.env.DELTA_CWD ?? process.cwd();

const input = JSON.parse(readFileSync(0, "utf8"));
const call = input.payload ?? {};
const toolArgs = parseArguments(call.arguments);
// Arguments that are not a JSON object are refused by the engine itself, with a better message.
if (toolArgs === undefined) process.exit(0);

for (const name of pathArguments) {
  if (!(name in toolArgs)) continue;
  const problem = checkPath(toolArgs[name]);
  if (problem !== null) {
    block(`${call.name}: ${name} ${problem}. Use a path to a file inside the workspace, such as "notes/todo.md".`);
  }
}
process.exit(0);

/** Why the value may not be used as a path, or null when it resolves inside the workspace. */
function checkPath(value) {
  if (typeof value !== "string" || value === "") return "must be a non-empty string";
  if (value.includes("\0")) return "contains a NUL byte";
  // A leading "-" would be read as an option by the tool (cat -n, tee -a…).
  if (value.startsWith("-")) return `${JSON.stringify(value)} starts with "-"`;
  const root = realpathSync.native(workspace);
  const lexical = resolve(workspace, value);
  if (!isInside(lexical, workspace)) {
    return `${JSON.stringify(value)} resolves to ${lexical}, outside the workspace ${workspace}`;
  }
  // Not `lexical`: path.resolve drops "link/.." by text, while the file system follows the link first.
  const real = realTarget(isAbsolute(value) ? value : `${workspace}${sep}${value}`);
  if (real === null) return `${JSON.stringify(value)} cannot be resolved: a symbolic link that points nowhere or in a loop, or ".." below a missing directory`;
  if (!isInside(real, root)) {
    return `${JSON.stringify(value)} leads through a symbolic link to ${real}, outside the workspace ${workspace}`;
  }
  const inRoot = relative(root, real);
  if (inRoot === ".delta" || inRoot.startsWith(`.delta${sep}`)) {
    return `${JSON.stringify(value)} is inside .delta, where the engine keeps its run records`;
  }
  return null;
}

/**
 * The path with every symbolic link resolved; for a file that does not exist yet, its nearest
 * existing ancestor is resolved. null for a dangling link (writing through it would create its
 * target, wherever that is), a loop of links, or ".." below a directory that does not exist.
 */
function realTarget(path) {
  let existing = path;
  const missing = [];
  while (!entryExists(existing)) {
    const parent = dirname(existing);
    if (parent === existing) break;
    missing.unshift(basename(existing));
    existing = parent;
  }
  // ".." after a directory that does not exist yet cannot be resolved the way the tool would see it.
  if (missing.includes("..")) return null;
  try {
    // The native realpath(3) follows each link before "..", as the tool will; the JS one normalizes ".." first.
    return join(realpathSync.native(existing), ...missing);
  } catch {
    return null;
  }
}

/** True for anything at that path, a dangling symbolic link included (lstat does not follow it). */
function entryExists(path) {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isInside(path, root) {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

function parseArguments(text) {
  try {
    const value = JSON.parse(typeof text === "string" && text.trim() !== "" ? text : "{}");
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function block(reason) {
  process.stdout.write(`${JSON.stringify({ decision: "block", reason })}\n`);
  process.exit(0);
}
