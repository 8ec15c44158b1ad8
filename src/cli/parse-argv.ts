// Reads a command line against the one command table (cac's): a known command, known options, each value exactly as typed, and no word left unused.
//
// Every command the table holds follows the same rules, one added later included: a mistyped command or option is
// refused (126) with the nearest known one, and a word no argument of the command takes is refused naming it, never
// dropped. cac's own parser is not used: it would drop such a word, read `-y ""` as `-y false` with a task `0`,
// `007` as 7, and `-mhello` as `-m -h -e -l -l -o`. cac keeps the table and prints the help.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CAC, Command } from "cac";
import { didYouMean } from "../did-you-mean.js";
import { UsageError } from "../errors.js";

/** Words users of other agent CLIs type for our commands (`codex exec`, `codex exec resume`, `ls`), and `runs`: one letter from `run`, but a list. */
const PEER_WORDS: Readonly<Record<string, string>> = { exec: "run", resume: "continue", ls: "list-runs", runs: "list-runs", logs: "show" };

/** The arguments that are free text, whose words a shell splits unless they are quoted together. */
const TEXT_ARGUMENTS: ReadonlySet<string> = new Set(["task", "message"]);

interface ParsedLine {
  /** The command named, or null for `delta --version`, `delta --help`, `delta`. */
  command: Command | null;
  /** The words, one per argument the command declares (undefined when not given; a variadic last one takes the rest). */
  args: (string | undefined)[];
  /** Each option given, by cac's name for it (`--work-dir` → workDir): a value as typed, true for a flag, several values as a list. */
  flags: Record<string, unknown>;
  help: boolean;
  version: boolean;
}

interface KnownOption {
  /** cac's name for it, the key in `flags`: its longest name, camel-cased (`--work-dir` → workDir). */
  key: string;
  takesValue: boolean;
  /** Every spelling of the option, short first: `-m, --message`. */
  spellings: string[];
}

/** Parses `argv` (without `delta`), or refuses it (UsageError) naming what is wrong and the fix. */
export function parseArgv(cli: CAC, argv: readonly string[]): ParsedLine {
  const named = argv[0];
  const asksHelp = argv.slice(0, until(argv)).some((token) => token === "--help" || token === "-h");
  if (named === undefined || named.startsWith("-")) return withoutCommand(cli, argv, asksHelp);
  const command = cli.commands.find((candidate) => candidate.name === named || candidate.aliasNames.includes(named));
  if (command === undefined) throw new UsageError(`Unknown command '${named}'.${commandSuggestion(cli, named)} See: delta --help`);
  const known = optionsOf([...command.options, ...cli.globalCommand.options]);
  // Help is shown whatever else was typed.
  if (asksHelp) return { command, args: [], flags: {}, help: true, version: false };
  const { flags, words } = readTokens(argv.slice(1), known, (spelling) => unknownOption(cli, command, spelling));
  for (const option of command.options) {
    const key = option.name;
    if (flags[key] === undefined && option.config.default !== undefined) flags[key] = option.config.default;
  }
  const { help, version, ...rest } = flags;
  return { command, args: argumentsOf(command, words), flags: rest, help: help === true, version: version === true };
}

/** `delta --version`, `delta --help`: global options only; an option typed before the command is named in the fix. */
function withoutCommand(cli: CAC, argv: readonly string[], asksHelp: boolean): ParsedLine {
  const known = optionsOf(cli.globalCommand.options);
  const later = argv.find((token) => cli.commands.some((command) => command.name === token));
  const { flags, words } = readTokens(argv, known, (spelling) => {
    if (later !== undefined) return new UsageError(`Options go after the command: delta ${later} … ${spelling}. See: delta ${later} --help`);
    return new UsageError(`Unknown option \`${spelling}\`.${suggestOption(spelling, known)} To start a run: delta run [--agent <dir>] "<task>". See: delta --help`);
  });
  if (words.length > 0 && !asksHelp) {
    throw new UsageError(`Unknown command '${words[0]}': options come after the command.${commandSuggestion(cli, words[0]!)} See: delta --help`);
  }
  return { command: null, args: [], flags: {}, help: asksHelp, version: flags.version === true };
}

function commandSuggestion(cli: CAC, typed: string): string {
  const peer = PEER_WORDS[typed];
  if (peer !== undefined) return ` Did you mean ${peer}?`;
  return didYouMean(typed, cli.commands.map((command) => command.name));
}

/** Where options end: everything after `--` is a word, whatever it looks like. */
function until(argv: readonly string[]): number {
  const end = argv.indexOf("--");
  return end === -1 ? argv.length : end;
}

/**
 * Walks the tokens: each option must be a known spelling, and a value-taking one takes the next token as its value,
 * whatever it is (`-m --verbose` is the message "--verbose"). The other tokens are the words.
 */
function readTokens(tokens: readonly string[], known: Map<string, KnownOption>, unknown: (spelling: string) => UsageError): { flags: Record<string, unknown>; words: string[] } {
  const flags: Record<string, unknown> = {};
  const words: string[] = [];
  const set = (option: KnownOption, value: string | true): void => {
    const before = flags[option.key];
    // A value given twice is kept twice, so the command can refuse it; a flag twice is a flag.
    flags[option.key] = before === undefined || value === true ? value : [...(Array.isArray(before) ? before : [before]), value];
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token === "--") {
      words.push(...tokens.slice(i + 1));
      break;
    }
    if (token === "-" || !token.startsWith("-")) {
      words.push(token);
      continue;
    }
    if (token.startsWith("--")) {
      const equals = token.indexOf("=");
      const spelling = equals === -1 ? token : token.slice(0, equals);
      const option = known.get(spelling);
      if (option === undefined) throw unknown(spelling);
      if (!option.takesValue && equals !== -1) throw new UsageError(`${spelling} takes no value; write ${spelling} alone.`);
      if (!option.takesValue) set(option, true);
      else if (equals !== -1) set(option, token.slice(equals + 1));
      else set(option, valueAfter(tokens, (i += 1), spelling));
      continue;
    }
    // `-y`, `-yv`, `-m value`: every letter a known option, a value-taking one only last (it takes the next token).
    const letters = [...token.slice(1)];
    for (const [index, letter] of letters.entries()) {
      const option = known.get(`-${letter}`);
      if (option === undefined) {
        // `-verbose` for `--verbose`: the long option is what was meant.
        if (letters.length > 1 && known.has(`-${token}`)) throw new UsageError(`Unknown option \`${token}\` (a long option takes two dashes). Did you mean -${token}?`);
        throw unknown(letters.length > 1 ? token : `-${letter}`);
      }
      if (!option.takesValue) set(option, true);
      else if (index < letters.length - 1) throw new UsageError(`${token}: -${letter} takes a value; write it apart: -${letter} ${token.slice(index + 2)}`);
      else set(option, valueAfter(tokens, (i += 1), `-${letter}`));
    }
  }
  return { flags, words };
}

function valueAfter(tokens: readonly string[], at: number, spelling: string): string {
  const value = tokens[at];
  if (value === undefined) throw new UsageError(`${spelling} needs a value, and nothing follows it.`);
  return value;
}

/** The refusal of an option the command does not have: the nearest it has, else the commands that have it. */
function unknownOption(cli: CAC, command: Command, spelling: string): UsageError {
  const suggestion = suggestOption(spelling, optionsOf([...command.options, ...cli.globalCommand.options]));
  const elsewhere = suggestion === "" ? commandsWith(cli, spelling).filter((name) => name !== command.name) : [];
  const where = elsewhere.length > 0 ? ` (${spelling} is an option of ${elsewhere.join(", ")})` : "";
  return new UsageError(`Unknown option \`${spelling}\`${where}.${suggestion} See: delta ${command.name} --help`);
}

/** A long spelling is compared with long ones, a short one with short ones (`-v` with `-V`), by their names alone. */
function suggestOption(spelling: string, known: Map<string, KnownOption>): string {
  const long = spelling.startsWith("--");
  const dashes = long ? "--" : "-";
  const names = [...known.keys()].filter((candidate) => candidate.startsWith("--") === long).map((candidate) => candidate.slice(dashes.length));
  return didYouMean(spelling.slice(dashes.length), names, (name) => {
    const typed = `${dashes}${name}`;
    const longForm = known.get(typed)!.spellings.find((part) => part.startsWith("--"));
    return long || longForm === undefined ? typed : `${typed} (${longForm})`;
  });
}

function commandsWith(cli: CAC, spelling: string): string[] {
  return cli.commands.filter((command) => command.options.some((option) => spellingsOf(option.rawName).includes(spelling))).map((command) => command.name);
}

/** The words, one per declared argument; words beyond them are refused, each named, with the line that was likely meant. */
function argumentsOf(command: Command, words: readonly string[]): (string | undefined)[] {
  const takes = command.args;
  const missing = takes.filter((arg, index) => arg.required && words[index] === undefined);
  if (missing.length > 0) throw new UsageError(`delta ${command.name} needs ${missing.map((arg) => `<${arg.value}>`).join(" ")}. See: delta ${command.name} --help`);
  if (takes.some((arg) => arg.variadic)) return [...words];
  if (words.length <= takes.length) return takes.map((_arg, index) => words[index]);
  const left = words.slice(takes.length);
  const count = takes.length === 0 ? "no argument" : takes.length === 1 ? "one argument" : `${takes.length} arguments`;
  const names = takes.length === 0 ? "" : ` (${takes.map((arg) => (arg.required ? `<${arg.value}>` : `[${arg.value}]`)).join(" ")})`;
  const agents = words.filter(isAgentFolder).map((word) => ` ${JSON.stringify(word)} is an agent's folder: give it as --agent ${word}.`).join("");
  // A text argument (run's task, continue's message) is most often words that were not quoted together; a name or an id is not.
  const last = takes.at(-1);
  const quoted = last === undefined || !TEXT_ARGUMENTS.has(last.value) || agents !== "" ? "" : ` Quote words that belong together: delta ${command.name} … ${JSON.stringify(words.slice(takes.length - 1).join(" "))}.`;
  throw new UsageError(
    `delta ${command.name} takes ${count}${names}, and these words were left over: ${left.map((word) => JSON.stringify(word)).join(" ")}.${agents}${quoted} See: delta ${command.name} --help`,
  );
}

function isAgentFolder(word: string): boolean {
  return existsSync(join(word, "agent.yaml"));
}

/** Every spelling of these options, with cac's name for the option and whether it takes a value. */
function optionsOf(options: readonly Command["options"][number][]): Map<string, KnownOption> {
  const known = new Map<string, KnownOption>();
  for (const option of options) {
    const spellings = spellingsOf(option.rawName);
    for (const spelling of spellings) known.set(spelling, { key: option.name, takesValue: !option.isBoolean, spellings });
  }
  return known;
}

/** `-m, --message <text>` → `-m`, `--message`. */
function spellingsOf(rawName: string): string[] {
  return rawName.split(/[ ,]+/).filter((part) => part.startsWith("-"));
}
