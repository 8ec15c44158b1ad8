// Reads one YAML file of an agent package, refusing syntax errors with file:line:column.
import { readFile } from "node:fs/promises";
import { isMap, isNode, isScalar, LineCounter, parseDocument, type Document } from "yaml";
import { ConfigError, errorMessage } from "../errors.js";
import { indentationProblem } from "./yaml-indentation.js";

/** Alias expansions allowed per file; enough for anchors reused by hand, far below an exponential bomb. */
const MAX_ALIAS_COUNT = 100;

export interface YamlFile {
  /** How messages name the file (relative to the agent home when inside it). */
  display: string;
  data: unknown;
  /** `file:line:col` of the node at a field path, when it can be found. */
  locate(path: readonly PropertyKey[]): string | undefined;
  /** `file:line:col` of the key (not the value) that ends a field path, when it can be found. */
  locateKey(path: readonly PropertyKey[]): string | undefined;
}

interface YamlTextOptions {
  allowEmpty?: boolean;
  /** The line of the file the text starts on (a SKILL.md's front matter starts on line 2); positions name the file's lines. */
  firstLine?: number;
}

export async function readYamlFile(absolutePath: string, display: string, options: { allowEmpty?: boolean } = {}): Promise<YamlFile> {
  let text: string;
  try {
    text = await readFile(absolutePath, "utf8");
  } catch (err) {
    throw new ConfigError(`${display}: cannot read ${absolutePath}: ${errorMessage(err)}`, { cause: err });
  }
  return parseYamlText(text, display, options);
}

/** YAML text (a whole file, or the part of one that starts at `firstLine`) as a mapping; errors name the file's line and column. */
export function parseYamlText(text: string, display: string, options: YamlTextOptions = {}): YamlFile {
  const lineOffset = (options.firstLine ?? 1) - 1;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) {
    const where = problem.linePos?.[0] ?? lineCounter.linePos(problem.pos[0]);
    const indentation = indentationProblem(text, problem, where.line);
    if (indentation !== null) {
      throw new ConfigError(`${display}:${indentation.line + lineOffset}:${indentation.col}: ${indentation.message.replace(/\bline (\d+)/g, (_all, n: string) => `line ${Number(n) + lineOffset}`)}`);
    }
    const firstLine = problem.message.split("\n")[0] ?? problem.message;
    throw new ConfigError(`${display}:${where.line + lineOffset}:${where.col}: ${firstLine} (fix the YAML syntax at that spot)`);
  }
  const data = toData(doc, display);
  const at = (node: { range?: [number, number, number] | null } | undefined): string | undefined => {
    const offset = node?.range?.[0];
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return `${display}:${line + lineOffset}:${col}`;
  };
  const locate = (path: readonly PropertyKey[]): string | undefined => at(nodeAt(doc, path));
  const locateKey = (path: readonly PropertyKey[]): string | undefined => at(keyNodeAt(doc, path));
  if (data === null || data === undefined) {
    if (options.allowEmpty) return { display, data: {}, locate, locateKey };
    throw new ConfigError(`${display}: the file is empty; it must be a YAML mapping (key: value lines)`);
  }
  if (!isMap(doc.contents)) {
    const position = locate([]) ?? display;
    throw new ConfigError(`${position}: the top level must be a mapping (key: value lines), not ${Array.isArray(data) ? "a list" : `a ${typeof data}`}`);
  }
  return { display, data, locate, locateKey };
}

/** yaml throws a bare ReferenceError when aliases expand too much (a "billion laughs" bomb): refuse it as a config error. */
function toData(doc: Document, display: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    throw new ConfigError(
      `${display}: refused: its aliases (*name) expand to more than ${MAX_ALIAS_COUNT} copies (${errorMessage(err)}); ` +
        "write the repeated values out, or use fewer nested aliases",
      { cause: err },
    );
  }
}

/** The key node of the last step of `path`, in the mapping the rest of the path leads to. */
function keyNodeAt(doc: Document, path: readonly PropertyKey[]): { range?: [number, number, number] | null } | undefined {
  const last = path.at(-1);
  const parent = path.length === 1 ? doc.contents : nodeAt(doc, path.slice(0, -1));
  if (!isMap(parent) || typeof last !== "string") return undefined;
  const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
  return isNode(pair?.key) ? pair.key : undefined;
}

function nodeAt(doc: Document, path: readonly PropertyKey[]): { range?: [number, number, number] | null } | undefined {
  const keys = path.filter((key): key is string | number => typeof key !== "symbol");
  const node: unknown = keys.length === 0 ? doc.contents : doc.getIn(keys, true);
  return isNode(node) ? node : undefined;
}
