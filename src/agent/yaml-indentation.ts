// An indentation mistake in a YAML file said in our words: which line, how far it is indented, and the columns it could mean.
import type { YAMLError } from "yaml";

/** A line of the file and how it opens: its indentation, and the column of its key when it is a list item (`- name:`). */
interface Line {
  number: number;
  text: string;
  indent: number;
  /** For `- key: …`, the column its key starts at (the item's own keys line up there). */
  itemKey: number | null;
}

/**
 * The message for a parser error that comes from indentation, naming the line to fix (line:col is the start of its
 * text), or null when the error is of another kind and the parser's words stand.
 */
export function indentationProblem(text: string, error: YAMLError, reportedLine: number): { line: number; col: number; message: string } | null {
  const lines = text.split(/\r?\n/).map((content, index) => describe(content, index + 1));
  const at = lines[reportedLine - 1];
  if (at === undefined) return null;
  if (error.code === "TAB_AS_INDENT") {
    return { line: at.number, col: 1, message: `line ${at.number} is indented with a tab; YAML indents with spaces only: replace the tab with spaces (two per level)` };
  }
  const misplaced = error.code === "BAD_INDENT" || (error.code === "MISSING_CHAR" && error.message.startsWith("Sequence item without"));
  if (misplaced && !isBlank(at)) return { line: at.number, col: at.indent + 1, message: notAColumnAbove(lines, at) };
  if (error.code === "BLOCK_AS_IMPLICIT_KEY" || error.code === "MULTILINE_IMPLICIT_KEY") return deeperThanAValue(lines, at);
  return null;
}

/** A line indented to none of the columns the keys above it start at. */
function notAColumnAbove(lines: readonly Line[], at: Line): string {
  const columns = columnsAbove(lines, at.number);
  const listed = columns.map(({ indent, line }) => `${spaces(indent)} (${quoteKey(line, indent)}, line ${line.number})`).join(", ");
  return (
    `line ${at.number} is indented by ${spaces(at.indent)}, but the lines above it start at ${listed}. ` +
    "YAML reads nesting from indentation: a key belongs to the mapping whose keys start in the same column, and an item's keys line up after its \"- \". " +
    `Indent line ${at.number} exactly as the key it sits beside`
  );
}

/** `key: value` followed by a line indented deeper: only a key with nothing after its colon can have lines nested under it. */
function deeperThanAValue(lines: readonly Line[], at: Line): { line: number; col: number; message: string } | null {
  const next = lines.slice(at.number).find((line) => !isBlank(line));
  if (next === undefined || next.indent <= (at.itemKey ?? at.indent)) return null;
  const keyColumn = at.itemKey ?? at.indent;
  return {
    line: next.number,
    col: next.indent + 1,
    message:
      `line ${next.number} is indented deeper (${spaces(next.indent)}) than line ${at.number} (${quoteKey(at, keyColumn)}, ${spaces(keyColumn)}), ` +
      `which already has its value on its own line; only a key with nothing after its colon takes nested lines. ` +
      `Indent line ${next.number} by ${spaces(keyColumn)}, as ${quoteKey(at, keyColumn)}, or move the value below the key`,
  };
}

/** The columns open at `number`: walking up, each line less indented than any below it so far (an item's key column too), nearest first. */
function columnsAbove(lines: readonly Line[], number: number): { indent: number; line: Line }[] {
  const columns: { indent: number; line: Line }[] = [];
  let limit = Infinity;
  for (let index = number - 2; index >= 0 && limit > 0; index -= 1) {
    const line = lines[index]!;
    if (isBlank(line)) continue;
    if (line.itemKey !== null && line.itemKey < limit) columns.push({ indent: line.itemKey, line });
    if (line.indent < limit) {
      columns.push({ indent: line.indent, line });
      limit = line.indent;
    }
  }
  return columns;
}

function describe(text: string, number: number): Line {
  const indent = text.length - text.trimStart().length;
  const item = /^(\s*)-(\s+)(?=[^\s#])/.exec(text);
  return { number, text, indent, itemKey: item === null ? null : item[0].length };
}

function isBlank(line: Line): boolean {
  const content = line.text.trim();
  return content === "" || content.startsWith("#");
}

/** `name:` as the line shows its key at that column (or `- ` for the item itself). */
function quoteKey(line: Line, column: number): string {
  const rest = line.text.slice(column);
  const key = /^[^:#]*:/.exec(rest)?.[0];
  if (column === line.indent && line.itemKey !== null) return "`- `";
  return key === undefined ? `\`${rest.trim()}\`` : `\`${key}\``;
}

function spaces(count: number): string {
  return count === 1 ? "1 space" : `${count} spaces`;
}
