// Hostile inputs for property tests: fast-check arbitraries for agent packages, tool arguments, run ids, .env files and journal lines.
import fc from "fast-check";

/** Stands for the absolute path of a canary file; replaced per test, so "created" means "something executed". */
export const CANARY = "@CANARY@";

/** Nine aliases per level: 9^levels strings once expanded ("billion laughs"). */
export function aliasBomb(levels = 9): string {
  const lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (let level = 1; level < levels; level += 1) {
    const previous = `*l${level - 1}`;
    lines.push(`l${level}: &l${level} [${Array(9).fill(previous).join(",")}]`);
  }
  return `${lines.join("\n")}\n`;
}

const SHELL_FRAGMENTS = [
  "'", '"', "`touch @CANARY@`", "$(touch @CANARY@)", "; touch @CANARY@", "&& touch @CANARY@", "| touch @CANARY@",
  "\n", "\r\n", "\t", "\\", "-", "--", "-rf", "--help", "$HOME", "${PATH}", "*", "?", "~", "#", "{a,b}", ">", "<",
  ">@CANARY@", "é", "🙂", "\u202e", "%s", "%n", " ", "=",
];

/** Text an attacker would send: shell metacharacters, quotes, command substitutions, control characters, unicode. */
export const hostileText: fc.Arbitrary<string> = fc
  .array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SHELL_FRAGMENTS) }, { weight: 1, arbitrary: fc.string({ maxLength: 8 }) }), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.join(""));

/** A tool argument from the model: hostile text, sometimes with a NUL byte or far too long for one argv entry. */
export const hostileArgument: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: hostileText },
  { weight: 1, arbitrary: hostileText.map((text) => `${text}\u0000${text}`) },
  { weight: 1, arbitrary: fc.integer({ min: 140_000, max: 300_000 }).map((size) => "A".repeat(size)) },
);

/** Run ids that must be refused: traversal, separators, hidden, empty, too long, unicode, control characters. */
export const invalidRunId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", ".", "..", "../escape", "../../etc/passwd", "a/b", "/abs", "a\\b", ".hidden", "a b", "a\u0000b", "ränn", "🙂", "a\nb", "x".repeat(129)),
  fc.tuple(fc.constantFrom("../", "/", "./", ".", "a/"), fc.stringMatching(/^[a-z0-9]{1,10}$/)).map(([prefix, rest]) => `${prefix}${rest}`),
  fc.string({ minLength: 1, maxLength: 20 }).filter((id) => !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/.test(id)),
);

/** Any string at all as a run id, valid or not. */
export const anyRunId: fc.Arbitrary<string> = fc.oneof(invalidRunId, fc.stringMatching(/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,40}$/));

const VALID_HEAD = "name: hostile\nllm:\n  model: mock-model\n";
const CANARY_TOOL = `  - name: canary\n    shell: "touch ${CANARY}"\n`;

/** agent.yaml documents that are invalid for certain, each also describing a tool that would touch the canary. */
export const invalidAgentYaml: fc.Arbitrary<string> = fc.oneof(
  // Malformed YAML.
  fc.constantFrom(
    `${VALID_HEAD}tools:\n${CANARY_TOOL}  - name: [unclosed\n`,
    `name: 'unterminated\n${VALID_HEAD.slice(14)}tools:\n${CANARY_TOOL}`,
    `${VALID_HEAD}tools:\n${CANARY_TOOL}\t- name: tab\n`,
    `${VALID_HEAD}name: twice\ntools:\n${CANARY_TOOL}`,
    `${VALID_HEAD}description: *undefined_alias\ntools:\n${CANARY_TOOL}`,
    `${VALID_HEAD}tools:\n${CANARY_TOOL}a: b: c\n`,
    `{${VALID_HEAD}`,
  ),
  // Wrong types.
  fc.tuple(
    fc.constantFrom("name", "llm", "tools", "llm.model", "llm.temperature", "llm.max_retries", "imports"),
    fc.constantFrom("42", "[1, 2]", "{a: 1}", "true", "null", '"$(touch @CANARY@)"', "-1"),
  ).map(([field, value]) => wrongType(field, value)),
  // Hostile tool definitions.
  fc.tuple(
    fc.constantFrom(
      `  - name: "a;touch ${CANARY}"\n    exec: "echo hi"\n`,
      `  - name: "$(touch ${CANARY})"\n    exec: "echo"\n`,
      "  - name: ../escape\n    exec: \"echo\"\n",
      `  - name: both\n    exec: "touch ${CANARY}"\n    shell: "touch ${CANARY}"\n`,
      `  - name: neither\n    description: "touch ${CANARY}"\n`,
      `  - name: ops\n    exec: "echo \${x} ; touch ${CANARY}"\n`,
      `  - name: quote\n    exec: "echo 'unterminated \${x}"\n`,
      `  - name: badparam\n    exec: "echo \${a b}"\n`,
      `  - name: ask_human\n    exec: "touch ${CANARY}"\n`,
      `  - name: unknownkey\n    exec: "touch ${CANARY}"\n    run_as: root\n`,
      `  - name: badtimeout\n    exec: "touch ${CANARY}"\n    timeout_ms: "soon"\n`,
      `  - name: dup\n    exec: "touch ${CANARY}"\n  - name: dup\n    exec: "touch ${CANARY}"\n`,
    ),
    fc.boolean(),
  ).map(([tool, canaryFirst]) => `${VALID_HEAD}tools:\n${canaryFirst ? CANARY_TOOL + tool : tool + CANARY_TOOL}`),
  // Alias bombs.
  fc.integer({ min: 6, max: 9 }).map((levels) => `${VALID_HEAD}tools:\n${CANARY_TOOL}${aliasBomb(levels)}`),
);

function wrongType(field: string, text: string): string {
  const tools = `tools:\n${CANARY_TOOL}`;
  // Any string is a valid name or model (both are only labels), so those get a list instead.
  const value = text.startsWith('"') && (field === "name" || field === "llm.model") ? `[${text}]` : text;
  switch (field) {
    case "name":
      return `name: ${value}\nllm:\n  model: m\n${tools}`;
    case "llm":
      return `name: a\nllm: ${value}\n${tools}`;
    case "tools":
      return `${VALID_HEAD}tools: ${value}\n`;
    case "llm.model":
      return `name: a\nllm:\n  model: ${value}\n${tools}`;
    case "imports":
      return `${VALID_HEAD}imports: ${value === "null" ? "7" : value}\n${tools}`;
    default: {
      const key = field.split(".")[1]!;
      // A string is fine for neither; a number is wrong only when negative or not an integer where one is needed.
      const bad = /^-?\d/.test(value) ? '"string"' : value;
      return `${VALID_HEAD}  ${key}: ${bad}\n${tools}`;
    }
  }
}

/** hooks.yaml and context.yaml that would run the canary if the package were ever accepted. */
export const CANARY_HOOKS = `on_iteration_start:\n  command: ["touch", "${CANARY}"]\non_run_end:\n  command: ["touch", "${CANARY}"]\n`;
export const CANARY_CONTEXT = `sources:\n  - type: computed_file\n    id: canary\n    generator:\n      command: ["touch", "${CANARY}"]\n    output_path: "\${CWD}/out.md"\n  - type: journal\n`;

const DOTENV_LINES = [
  "DELTA_API_KEY=sk-from-file", "export DELTA_BASE_URL=http://127.0.0.1:1/v1", "=novalue", "NOEQUALS", "1BAD=x", "BAD-KEY!=x",
  'QUOTED="unterminated', "SINGLE='it''s'", "BACK=`$(touch @CANARY@)`", "# comment", "SPACED = v # trailing", "\uFEFFBOM=1",
  'MULTI="line one', 'line two"', "EMPTY=", "NUL=a\u0000b", "  INDENTED=yes", "export", "export =x", 'ESC="a\\nb\\"c"',
];

/** .env text: known-tricky lines mixed with random ones, LF or CRLF. */
export const dotenvText: fc.Arbitrary<string> = fc
  .tuple(fc.array(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...DOTENV_LINES) }, { weight: 1, arbitrary: hostileText }), { maxLength: 12 }), fc.boolean())
  .map(([lines, crlf]) => lines.join(crlf ? "\r\n" : "\n"));

/** A valid journal line with sequence number `seq`. */
function journalLine(seq: number, content = `message ${seq}`): string {
  return JSON.stringify({ seq, type: "USER_MESSAGE", timestamp: "2026-11-23T10:00:00.000Z", content });
}

export type JournalDamage =
  | { kind: "garbage"; at: number; text: string }
  | { kind: "torn"; keep: number }
  | { kind: "wrongSchema"; at: number; event: unknown }
  | { kind: "seqGap"; at: number }
  | { kind: "emptyLine"; at: number }
  | { kind: "array" };

export interface DamagedJournal {
  /** Valid events before the damage. */
  valid: number;
  damage: JournalDamage;
  text: string;
  /** 1-based line the reader must name, or null when it must read the file (torn last line) or refuse it whole (array). */
  badLine: number | null;
}

/** A journal of valid events with one kind of damage at one place. */
export const damagedJournal: fc.Arbitrary<DamagedJournal> = fc
  .tuple(
    fc.integer({ min: 0, max: 6 }),
    fc.oneof(
      fc.record({ kind: fc.constant("garbage" as const), at: fc.nat(), text: fc.string({ maxLength: 30 }).map((text) => text.replace(/\n/g, " ")).filter((text) => text.trim() !== "" && !isJsonEvent(text)) }),
      fc.record({ kind: fc.constant("torn" as const), keep: fc.integer({ min: 1, max: 40 }) }),
      fc.record({
        kind: fc.constant("wrongSchema" as const),
        at: fc.nat(),
        event: fc.constantFrom<unknown>({ type: "USER_MESSAGE" }, { seq: "1", type: "USER_MESSAGE", timestamp: "t", content: "x" }, { type: "NO_SUCH_TYPE", timestamp: "t" }, { type: "THOUGHT", timestamp: "t" }, "string", 42, null),
      }),
      fc.record({ kind: fc.constant("seqGap" as const), at: fc.nat() }),
      fc.record({ kind: fc.constant("emptyLine" as const), at: fc.nat() }),
      fc.constant({ kind: "array" as const }),
    ),
  )
  .map(([count, damage]) => buildDamaged(count, damage));

function isJsonEvent(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** An object event keeps its own (wrong) fields over the right seq; anything else is written as it is. */
function wrongSchemaLine(seq: number, event: unknown): string {
  return JSON.stringify(typeof event === "object" && event !== null && !Array.isArray(event) ? { seq, ...event } : event);
}

function buildDamaged(count: number, damage: JournalDamage): DamagedJournal {
  const lines = Array.from({ length: count }, (_, index) => journalLine(index + 1));
  const at = "at" in damage ? damage.at % (count + 1) : count;
  switch (damage.kind) {
    case "garbage":
    case "wrongSchema":
    case "emptyLine": {
      const text = damage.kind === "garbage" ? damage.text : damage.kind === "emptyLine" ? "" : wrongSchemaLine(at + 1, damage.event);
      const all = [...lines.slice(0, at), text, ...lines.slice(at).map((_, index) => journalLine(at + index + 2))];
      return { valid: at, damage, text: `${all.join("\n")}\n`, badLine: at + 1 };
    }
    case "seqGap": {
      const all = [...lines.slice(0, at), journalLine(at + 2)];
      return { valid: at, damage, text: `${all.join("\n")}\n`, badLine: at + 1 };
    }
    case "torn": {
      const next = journalLine(count + 1);
      return { valid: count, damage, text: `${lines.map((line) => `${line}\n`).join("")}${next.slice(0, Math.min(damage.keep, next.length - 1))}`, badLine: null };
    }
    case "array":
      return { valid: 0, damage, text: `[${lines.join(",\n")}]\n`, badLine: null };
  }
}
