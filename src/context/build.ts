// Builds the model's messages from context.yaml's sources, in their order, re-reading files every time.
import { basename } from "node:path";
import type { JournalEvent } from "../journal/events.js";
import type { ChatMessage } from "../conversation.js";
import { expandArgvPathVariables, type PathVariables } from "../tools/path-variables.js";
import { journalToMessages } from "./journal-messages.js";
import { resolveSourcePath } from "./path-variables.js";
import { readSourceFile, type SourceFile } from "./read-source-file.js";
import { runGenerator } from "./run-generator.js";
import type { ComputedFileSource, ContextConfig, ContextSource, FileSource } from "./schema.js";

export interface ContextEnv {
  agentHome: string;
  cwd: string;
  runId: string;
  runDir: string;
  journalPath: string;
  /** The journal as read this iteration. */
  events: JournalEvent[];
  /** The environment generators start from, asked for when one runs; by default the engine's own without its API keys. */
  baseEnv?: () => Record<string, string>;
  signal?: AbortSignal;
  /** Debug lines for engine.log. */
  log?: (line: string) => void;
}

/**
 * Source order is message order. `file` and `computed_file` content becomes a system message:
 * when the context opens with a `file` source, that file is the system prompt and is sent
 * verbatim; every other block is labelled `# Context Block: <id or file name>` so the model can
 * tell the blocks apart. A missing file follows on_missing; an empty one adds nothing.
 * `journal` adds the conversation (see journalToMessages).
 */
export async function buildContext(config: ContextConfig, env: ContextEnv): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  const variables: PathVariables = { AGENT_HOME: env.agentHome, CWD: env.cwd };
  for (const [index, source] of config.sources.entries()) {
    if (source.type === "journal") {
      const conversation = journalToMessages(env.events, source.max_iterations === undefined ? {} : { maxIterations: source.max_iterations });
      env.log?.(`context: ${describe(source, index)} → ${conversation.length} messages`);
      // One by one: spreading a long run's messages into push() would put every one of them on the stack.
      for (const message of conversation) messages.push(message);
      continue;
    }
    const content = source.type === "file"
      ? await readFileSource(source, index, variables, env)
      : await readComputedSource(source, index, variables, env);
    if (content === null || content === "") continue;
    const isSystemPrompt = messages.length === 0 && source.type === "file";
    messages.push({ role: "system", content: isSystemPrompt ? content : `# Context Block: ${blockName(source)}\n\n${content}` });
  }
  return messages;
}

/** How a `file` source is read: its label for messages, the field to fix, its expanded path and on_missing rule. */
export function fileSourceFile(source: FileSource, index: number, variables: PathVariables): SourceFile {
  return {
    label: describe(source, index),
    field: `sources[${index}].path`,
    path: resolveSourcePath(source.path, variables),
    onMissing: source.on_missing,
    missingHint: "Create the file or fix the path",
  };
}

async function readFileSource(source: FileSource, index: number, variables: PathVariables, env: ContextEnv): Promise<string | null> {
  const file = fileSourceFile(source, index, variables);
  const content = await readSourceFile(file);
  env.log?.(`context: ${file.label} ${file.path}: ${content === null ? "missing, skipped" : `${content.length} chars`}`);
  return content;
}

async function readComputedSource(source: ComputedFileSource, index: number, variables: PathVariables, env: ContextEnv): Promise<string | null> {
  const label = describe(source, index);
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
    },
    timeoutMs: source.generator.timeout_ms,
    ...(env.baseEnv ? { baseEnv: env.baseEnv() } : {}),
    ...(env.signal ? { signal: env.signal } : {}),
  });
  const path = resolveSourcePath(source.output_path, variables);
  const content = await readSourceFile({
    label,
    field: `sources[${index}].output_path`,
    path,
    onMissing: source.on_missing,
    missingHint: "The generator exited 0 without writing it: make it write there or fix output_path",
  });
  env.log?.(`context: ${label} generator ran in ${durationMs} ms; ${path}: ${content === null ? "missing, skipped" : `${content.length} chars`}`);
  return content;
}

function blockName(source: FileSource | ComputedFileSource): string {
  return source.id ?? basename(source.type === "file" ? source.path : source.output_path);
}

function describe(source: ContextSource, index: number): string {
  return `'${source.id ?? source.type}' (sources[${index}])`;
}
