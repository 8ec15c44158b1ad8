// Reads one YAML file of an agent package, refusing syntax errors with file:line:column.
import { readFile } from "node:fs/promises";
import { isMap, isNode, LineCounter, parseDocument, type Document } from "yaml";
import { ConfigError, errorMessage } from "../errors.js";

export interface YamlFile {
  /** How messages name the file (relative to the agent home when inside it). */
  display: string;
  data: unknown;
  /** `file:line:col` of the node at a field path, when it can be found. */
  locate(path: readonly PropertyKey[]): string | undefined;
}

export async function readYamlFile(absolutePath: string, display: string, options: { allowEmpty?: boolean } = {}): Promise<YamlFile> {
  let text: string;
  try {
    text = await readFile(absolutePath, "utf8");
  } catch (err) {
    throw new ConfigError(`${display}: cannot read ${absolutePath}: ${errorMessage(err)}`, { cause: err });
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const problem = doc.errors[0];
  if (problem) {
    const where = problem.linePos?.[0] ?? lineCounter.linePos(problem.pos[0]);
    const firstLine = problem.message.split("\n")[0] ?? problem.message;
    throw new ConfigError(`${display}:${where.line}:${where.col}: ${firstLine} (fix the YAML syntax at that spot)`);
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  const locate = (path: readonly PropertyKey[]): string | undefined => {
    const node = nodeAt(doc, path);
    const offset = node?.range?.[0];
    if (offset === undefined) return undefined;
    const { line, col } = lineCounter.linePos(offset);
    return `${display}:${line}:${col}`;
  };
  if (data === null || data === undefined) {
    if (options.allowEmpty) return { display, data: {}, locate };
    throw new ConfigError(`${display}: the file is empty; it must be a YAML mapping (key: value lines)`);
  }
  if (!isMap(doc.contents)) {
    const position = locate([]) ?? display;
    throw new ConfigError(`${position}: the top level must be a mapping (key: value lines), not ${Array.isArray(data) ? "a list" : `a ${typeof data}`}`);
  }
  return { display, data, locate };
}

function nodeAt(doc: Document, path: readonly PropertyKey[]): { range?: [number, number, number] | null } | undefined {
  const keys = path.filter((key): key is string | number => typeof key !== "symbol");
  const node: unknown = keys.length === 0 ? doc.contents : doc.getIn(keys, true);
  return isNode(node) ? node : undefined;
}
