// The rules of every command line come from the one command table: each command there, one added later included, refuses a mistyped option with the nearest one and a word it does not take, keeps every value as typed, and gets --json where its --format offers json.
import { describe, expect, it } from "vitest";
import { buildCli } from "../../src/cli/command-table.js";
import { parseArgv } from "../../src/cli/parse-argv.js";
import { UsageError } from "../../src/errors.js";

const table = buildCli();

/** The message parseArgv refuses a line with, or null when it keeps the rules. */
function refusal(argv: string[]): string | null {
  try {
    parseArgv(table, argv);
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
}

/** A long option of the command with one letter dropped from its name: a typo one edit away. */
function typoOf(spelling: string): string {
  const name = spelling.slice(2);
  return `--${name.slice(0, -2)}${name.slice(-1)}`;
}

describe.each(table.commands.map((command) => [command.name, command] as const))("delta %s", (name, command) => {
  const longOptions = command.options.flatMap((option) => option.rawName.split(/[ ,]+/).filter((part) => part.startsWith("--")));

  it("refuses each mistyped option, naming the one it is nearest to", () => {
    for (const spelling of longOptions.filter((option) => option.length > 5)) {
      const typo = typoOf(spelling);
      if (longOptions.includes(typo)) continue;
      const message = refusal([name, typo]);
      expect(message).toContain(`Unknown option \`${typo}\``);
      expect(message).toMatch(/Did you mean --[a-z-]+\?/);
      expect(message).toContain(`See: delta ${name} --help`);
    }
  });

  it("refuses a word beyond its arguments, naming it, and keeps a line that gives only what it takes", () => {
    if (command.args.some((arg) => arg.variadic)) return;
    const words = command.args.map((arg) => `${arg.value}-word`);
    expect(refusal([name, ...words])).toBeNull();
    const message = refusal([name, ...words, "stray-word"]);
    expect(message).toContain(`delta ${name} takes`);
    expect(message).toContain('left over: "stray-word"');
  });
});

describe("the command line as a whole", () => {
  it("--json is offered by every command whose --format offers json, and by no other", () => {
    const withJson = table.commands.filter((command) => command.options.some((option) => option.names.includes("json"))).map((command) => command.name);
    expect(withJson).toEqual(["run", "continue", "list-runs", "prune", "verify", "fork", "diff", "skills", "budget", "batch"]);
    expect(refusal(["export", "--json"])).toContain("Unknown option `--json`");
  });

  it("refuses a mistyped command with the nearest one, and the words other agent CLIs use with ours", () => {
    expect(refusal(["runn"])).toBe("Unknown command 'runn'. Did you mean run? See: delta --help");
    expect(refusal(["contineu"])).toContain("Did you mean continue?");
    expect(refusal(["list"])).toContain("Did you mean list-runs?");
    // One letter from `run`, but a list of runs is what the plural asks for.
    expect(refusal(["runs"])).toContain("Did you mean list-runs?");
    expect(refusal(["exec", "task"])).toContain("Did you mean run?");
    expect(refusal(["resume"])).toContain("Did you mean continue?");
  });

  it("-V is the version, -v is --verbose: alone, -v is refused pointing at -V", () => {
    expect(refusal(["-V"])).toBeNull();
    expect(refusal(["--version"])).toBeNull();
    expect(refusal(["-v"])).toContain("Unknown option `-v`. Did you mean -V (--version)?");
    expect(refusal(["run", "-v", "task"])).toBeNull();
  });

  it("takes a value-taking option's next token as its value, whatever it looks like, and refuses one glued to other letters", () => {
    expect(refusal(["run", "-m", "--not-an-option"])).toBeNull();
    expect(refusal(["run", "--model", "-x", "task"])).toBeNull();
    expect(refusal(["run", "-mhello"])).toBe("-mhello: -m takes a value; write it apart: -m hello");
    expect(refusal(["run", "-yi", "task"])).toBeNull();
    expect(refusal(["run", "--model"])).toBe("--model needs a value, and nothing follows it.");
  });

  it("everything after -- is a word", () => {
    expect(refusal(["run", "--", "--a task that starts with dashes"])).toBeNull();
    expect(refusal(["run", "--", "one", "two"])).toContain('left over: "two"');
  });

  it("names the commands an option belongs to when the command has none like it, and an option typed before the command", () => {
    expect(refusal(["list-runs", "--last"])).toBe("Unknown option `--last` (--last is an option of continue, show, report, verify, export). See: delta list-runs --help");
    expect(refusal(["-y", "run", "task"])).toBe("Options go after the command: delta run … -y. See: delta run --help");
  });

  it("keeps every word and value exactly as typed: an empty task, 007, a value after a flag", () => {
    expect(parseArgv(table, ["run", "-y", ""])).toMatchObject({ args: [""], flags: { yes: true, agent: "." } });
    expect(parseArgv(table, ["run", "--run-id", "007", "--max-iterations=05", "0"])).toMatchObject({ args: ["0"], flags: { runId: "007", maxIterations: "05" } });
    expect(parseArgv(table, ["continue", "--run-id", "a", "--run-id", "b"]).flags).toMatchObject({ runId: ["a", "b"] });
    expect(parseArgv(table, ["show"]).args).toEqual([undefined]);
  });

  it("refuses a line without a required argument, naming it", () => {
    expect(refusal(["tool:expand"])).toBe("delta tool:expand needs <path>. See: delta tool:expand --help");
    expect(refusal(["mcp"])).toBe("delta mcp needs <action>. See: delta mcp --help");
  });

  it("asks to quote words together only where the argument is a text (run's task, continue's message), not a name or an id", () => {
    expect(refusal(["run", "write", "hello"])).toContain('Quote words that belong together: delta run … "write hello".');
    expect(refusal(["continue", "--last", "try", "again"])).toContain('Quote words that belong together: delta continue … "try again".');
    for (const line of [["mcp", "serve", "stray"], ["diff", "a", "b", "c"], ["init", "my", "agent"], ["show", "run-1", "run-2"]]) {
      const message = refusal(line);
      expect(message, line.join(" ")).toContain(`left over: "${line.at(-1)}"`);
      expect(message, line.join(" ")).not.toContain("Quote");
    }
  });

  it("a flag takes no value", () => {
    expect(refusal(["run", "--verbose=1", "task"])).toBe("--verbose takes no value; write --verbose alone.");
  });

  it("shows the help whatever else was typed, but not for an unknown command", () => {
    expect(refusal(["run", "--formt", "a", "b", "--help"])).toBeNull();
    expect(refusal(["no-such-command", "--help"])).toContain("Unknown command 'no-such-command'");
  });
});
