// The context's I/O: each `file`, `computed_file` and `skills` source read as it is now (files re-read, generators run) into a system message.
import { basename } from "node:path";
import type { ChatMessage } from "../conversation.js";
import { expandArgvPathVariables, type PathVariables } from "../tools/path-variables.js";
import type { SandboxBox } from "../process/sandbox/argv.js";
import { resolveSourcePath, sourceFolder } from "./path-variables.js";
import { readSourceFile, type SourceFile } from "./read-source-file.js";
import { runGenerator } from "./run-generator.js";
import type { ComputedFileSource, ContextConfig, ContextSource, FileSource, SkillsSource } from "./schema.js";

/** What reading the sources needs of the run. */
export interface SourcesEnv {
  agentHome: string;
  cwd: string;
  runId: string;
  runDir: string;
  journalPath: string;
  /** The environment generators start from (the engine's own without the run's secrets, or the box's), asked for when one runs. */
  baseEnv: () => Record<string, string>;
  /** The box generators run in, when the agent boxes hooks and generators. */
  sandbox?: SandboxBox | undefined;
  signal?: AbortSignal;
  /** Each `skills` source's listing, by source index: rendered and bounded when the agent loaded. */
  skillListings?: ReadonlyMap<number, string>;
  /** What the run's boxes are shown empty: a context file may not lead into it through a link. */
  hidden?: readonly string[];
}

type BlockSource = FileSource | ComputedFileSource | SkillsSource;

/** What a run without boxes hides: one list for every build, so a source's kept path is found again (sourceFileOf). */
const NOTHING_HIDDEN: readonly string[] = [];

/** A `file`, `computed_file` or `skills` source's system message, or null when it adds nothing. */
export interface SourceBlock {
  index: number;
  source: BlockSource;
  message: ChatMessage | null;
  /** For engine.log: the file read and how it went. */
  where: string;
}

/** Variable generators get: the first iteration the journal shows in full (iterations before it were dropped). */
const WINDOW_FIRST_ITERATION_ENV = "DELTA_WINDOW_FIRST_ITERATION";

/**
 * Every source but the journal, in order. When the context opens with a `file` source, that file
 * is the system prompt and is sent verbatim; every other block is labelled
 * `# Context Block: <id or file name>` so the model can tell the blocks apart. A missing file
 * follows on_missing; an empty one adds nothing. `firstIteration` is what generators are told the
 * window shows.
 */
export async function readBlocks(config: ContextConfig, env: SourcesEnv, firstIteration: number): Promise<SourceBlock[]> {
  const variables: PathVariables = { AGENT_HOME: env.agentHome, CWD: env.cwd };
  const blocks: SourceBlock[] = [];
  let first = true;
  for (const [index, source] of config.sources.entries()) {
    if (source.type === "journal") {
      first = false;
      continue;
    }
    const { path, content, ran } = await readSource(source, index, variables, env, firstIteration);
    const where = `${ran}${path}: ${content === null ? "missing, skipped" : `${content.length} chars`}`;
    if (content === null || content === "") {
      blocks.push({ index, source, message: null, where });
      continue;
    }
    const isSystemPrompt = first && source.type === "file";
    first = false;
    blocks.push({ index, source, message: systemMessage(source, isSystemPrompt ? content : `# Context Block: ${blockName(source)}\n\n${content}`), where });
  }
  return blocks;
}

// A source whose block reads as it did last time gives the same message object: what is keyed by a message (its size,
// its request part) is then worked out once, not once per iteration.
const lastMessages = new WeakMap<BlockSource, ChatMessage>();

function systemMessage(source: BlockSource, content: string): ChatMessage {
  const last = lastMessages.get(source);
  if (last?.content === content) return last;
  const message: ChatMessage = { role: "system", content };
  lastMessages.set(source, message);
  return message;
}

/** How a `file` source is read: its label for messages, the field to fix, its expanded path and on_missing rule. */
export function fileSourceFile(source: FileSource, index: number, variables: PathVariables, hidden: readonly string[] = []): SourceFile {
  const path = resolveSourcePath(source.path, variables);
  return {
    label: describeSource(source, index),
    field: `sources[${index}].path`,
    path,
    folder: sourceFolder(path, variables),
    onMissing: source.on_missing,
    missingHint: "Create the file or fix the path",
    hidden,
  };
}

/** A source as messages and engine.log name it: `'<id or type>' (sources[i])`. */
export function describeSource(source: ContextSource, index: number): string {
  return `'${source.id ?? source.type}' (sources[${index}])`;
}

async function readSource(source: BlockSource, index: number, variables: PathVariables, env: SourcesEnv, firstIteration: number): Promise<SourceRead> {
  switch (source.type) {
    case "file":
      return readFileSource(source, index, variables, env.hidden ?? NOTHING_HIDDEN);
    case "computed_file":
      return readComputedSource(source, index, variables, env, firstIteration);
    case "skills":
      // Read when the agent loaded (agent/skills/), so every request lists the same skills.
      return { path: "the skills listing", content: env.skillListings?.get(index) ?? "", ran: "" };
    default: {
      const unknown: never = source;
      throw new Error(`unknown context source ${JSON.stringify(unknown)}`);
    }
  }
}

interface SourceRead {
  path: string;
  content: string | null;
  /** How the generator ran, for the log ("" for a file). */
  ran: string;
}

async function readFileSource(source: FileSource, index: number, variables: PathVariables, hidden: readonly string[]): Promise<SourceRead> {
  const file = sourceFileOf(source, index, variables, hidden);
  return { path: file.path, content: await readSourceFile(file), ran: "" };
}

// A file source's path, folder and labels, worked out again only when what they are made of changed: the context is
// built every iteration, and its variables (the agent's folder, the workspace) stay what they were.
const knownSourceFiles = new WeakMap<FileSource, { index: number; variables: PathVariables; hidden: readonly string[]; file: SourceFile }>();

function sourceFileOf(source: FileSource, index: number, variables: PathVariables, hidden: readonly string[]): SourceFile {
  const known = knownSourceFiles.get(source);
  if (known && known.index === index && known.hidden === hidden && known.variables.AGENT_HOME === variables.AGENT_HOME && known.variables.CWD === variables.CWD) return known.file;
  const file = fileSourceFile(source, index, variables, hidden);
  knownSourceFiles.set(source, { index, variables, hidden, file });
  return file;
}

async function readComputedSource(source: ComputedFileSource, index: number, variables: PathVariables, env: SourcesEnv, firstIteration: number): Promise<SourceRead> {
  const label = describeSource(source, index);
  const durationMs = await runGenerator({
    label,
    field: `sources[${index}].generator`,
    argv: expandArgvPathVariables(source.generator.command, variables),
    cwd: env.cwd,
    env: {
      DELTA_RUN_ID: env.runId,
      DELTA_AGENT_HOME: env.agentHome,
      DELTA_CWD: env.cwd,
      JOURNAL_PATH: env.journalPath,
      RUN_DIR: env.runDir,
      [WINDOW_FIRST_ITERATION_ENV]: String(firstIteration),
    },
    timeoutMs: source.generator.timeout_ms,
    baseEnv: env.baseEnv(),
    sandbox: env.sandbox,
    ...(env.signal ? { signal: env.signal } : {}),
  });
  const path = resolveSourcePath(source.output_path, variables);
  const content = await readSourceFile({
    label,
    field: `sources[${index}].output_path`,
    path,
    folder: sourceFolder(path, variables),
    onMissing: source.on_missing,
    missingHint: "The generator exited 0 without writing it: make it write there or fix output_path",
    hidden: env.hidden ?? [],
  });
  return { path, content, ran: `generator ran in ${durationMs} ms; ` };
}

function blockName(source: BlockSource): string {
  if (source.type === "skills") return source.id ?? "skills";
  return source.id ?? basename(source.type === "file" ? source.path : source.output_path);
}
