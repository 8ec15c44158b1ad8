// Builds the model's messages from context.yaml's sources, in their order, re-reading files every time and keeping within the run's token budget.
import { basename } from "node:path";
import type { JournalEvent, NewEvent } from "../journal/events.js";
import type { ChatMessage, FunctionTool } from "../conversation.js";
import { ContextOverflowError, type ContextOverflow } from "../errors.js";
import { contextBudget, replyReserve, type ContextBudget } from "./budget.js";
import { ContextMeter, MESSAGE_OVERHEAD_TOKENS, messageEstimate, messageSize } from "./context-meter.js";
import { estimateRoom, estimateScale } from "./request-estimate.js";
import { estimateTokens } from "./token-counter.js";
import { foldIncrementally, type EventFold } from "../journal/fold.js";
import { journalSegments, journalToMessages, type JournalEntry } from "./journal-messages.js";
import { expandArgvPathVariables, type PathVariables } from "../tools/path-variables.js";
import { resolveSourcePath } from "./path-variables.js";
import { readSourceFile, type SourceFile } from "./read-source-file.js";
import { runGenerator } from "./run-generator.js";
import type { SandboxBox } from "../process/sandbox-argv.js";
import type { ComputedFileSource, ContextConfig, ContextSource, FileSource, SkillsSource } from "./schema.js";
import { BYTES_ESTIMATE, trustedRatio, windowEvent, windowJournal, windowState, type JournalBudget, type JournalWindow, type WindowState } from "./window-rule.js";

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
  /** The box generators run in, when the agent boxes hooks and generators. */
  sandbox?: SandboxBox | undefined;
  signal?: AbortSignal;
  /** Debug lines for engine.log. */
  log?: (line: string) => void;
  /** The run's budget; without one, only the journal sources' own limits apply and nothing needs a tokenizer. */
  budget?: ContextBudget;
  /** The tools sent with the request: they take room in the window too. */
  tools?: readonly FunctionTool[];
  /** The iteration the request is for (default: the one after the last THOUGHT). */
  iteration?: number;
  /** The server refused this request as too long: what it said, and what the engine counted of the prompt (before calibration). */
  overflow?: { sizes: ContextOverflow; sentEstimate: number };
  /** Each `skills` source's listing, by source index: rendered and bounded when the agent loaded. */
  skillListings?: ReadonlyMap<number, string>;
}

export interface BuiltContext {
  messages: ChatMessage[];
  /** The CONTEXT_WINDOW event to journal before sending, when the window moved. */
  windowEvent: NewEvent | null;
  /** The engine's count of the request (messages and tools) before calibration, when it counted one. */
  estimatedTokens: number | null;
  /** How it counted: BYTES_ESTIMATE (no tokenizer) or the counter's name; null when it did not. */
  estimatedBy: string | null;
}

/** Variable generators get: the first iteration the journal shows in full (iterations before it were dropped). */
const WINDOW_FIRST_ITERATION_ENV = "DELTA_WINDOW_FIRST_ITERATION";

/** Without trusted sizes from the server, an overflow teaches the run a window of this share of what it sent. */
const OVERFLOW_SHRINK = 0.9;

/**
 * Source order is message order. `file`, `computed_file` and `skills` content becomes a system message:
 * when the context opens with a `file` source, that file is the system prompt and is sent
 * verbatim; every other block is labelled `# Context Block: <id or file name>` so the model can
 * tell the blocks apart. A missing file follows on_missing; an empty one adds nothing.
 * `journal` adds the conversation, windowed by window-rule.ts: its own limits first, then what the
 * model's window leaves once the other sources, the tools and the reply are counted. Tokens are
 * counted only when a limit could be passed (bytes bound every count), so a run far from its
 * limits never loads a tokenizer. When even the user messages and the last iteration do not fit,
 * the build fails with CONTEXT_OVERFLOW.
 */
export async function buildContext(config: ContextConfig, env: ContextEnv): Promise<BuiltContext> {
  const budget = env.budget ?? contextBudget({ model: "" }, config);
  const meter = new ContextMeter(budget.model);
  const variables: PathVariables = { AGENT_HOME: env.agentHome, CWD: env.cwd };
  const iteration = env.iteration ?? nextIteration(env.events);
  const { state, window: modelWindow, overflow } = windowFacts(env, budget);
  const own: JournalBudget = {
    ...(budget.maxIterations !== undefined ? { maxIterations: budget.maxIterations } : {}),
    ...(budget.maxTokens !== undefined ? { maxTokens: budget.maxTokens } : {}),
  };
  const hasJournal = config.sources.some((source) => source.type === "journal");
  if (own.maxIterations === undefined && own.maxTokens === undefined && modelWindow === null && overflow === null) {
    // No limit at all: the conversation from the last recorded move on, nothing measured but for the log.
    const conversation = journalToMessages(env.events, state.first);
    const window: JournalWindow = { messages: conversation, first: state.first, rawTokens: conversationChars(env.events, state.first), rawMinimum: 0, move: null };
    const blocks = await readBlocks(config, env, variables, window.first);
    logAccount(env, config, blocks, window, { meter, counted: false, state, modelWindow, budget, estimatedTokens: null, event: null });
    return { messages: assemble(config, blocks, window), windowEvent: null, estimatedTokens: null, estimatedBy: null };
  }
  const counting = { on: env.overflow !== undefined };
  const tokensOf = (entry: JournalEntry): number => (counting.on ? meter.entryTokens(entry) : meter.entryBytes(entry));

  if (counting.on) await meter.load();
  // The journal under its own limits, measured in bytes first: only a move on tokens needs a count.
  const segments = journalSegments(env.events, state.first);
  let window = windowJournal(env.events, own, tokensOf, state, segments);
  if (!counting.on && window.move !== null && window.move.reason !== "max_iterations") {
    counting.on = true;
    await meter.load();
    window = windowJournal(env.events, own, tokensOf, state, segments);
  }
  let blocks = await readBlocks(config, env, variables, window.first);
  let estimated: number | null = null;

  if (hasJournal && modelWindow !== null) {
    const room = modelWindow - replyReserve(budget.maxReplyTokens, modelWindow);
    const fits = (): boolean => (blocksSize(blocks, null) + toolsSize(env.tools, null) + window.rawTokens + REPLY_PRIMING) * state.calibration <= room;
    if (!counting.on && !fits()) {
      // The bytes could pass the window: an estimate will do while it is far from the limit; nearer, the tokenizer counts.
      const guess = await estimateWindow({ config, env, variables, own, state, segments, meter, room, window, blocks });
      if (guess === null) {
        counting.on = true;
        await meter.load();
      } else {
        ({ window, blocks, tokens: estimated } = guess);
      }
    }
    if (counting.on) {
      const others = (): number => (blocksSize(blocks, meter) + toolsSize(env.tools, meter) + REPLY_PRIMING) * state.calibration;
      const first = window.first;
      window = windowJournal(env.events, { ...own, windowTokens: room - others(), ...(overflow ? { overflow: true } : {}) }, tokensOf, state, segments);
      if (window.first !== first && config.sources.some((source) => source.type === "computed_file")) {
        blocks = await readBlocks(config, env, variables, window.first);
      }
      const minimum = others() + window.rawMinimum * state.calibration;
      if (minimum > room || (overflow && window.move === null)) throw tooLong(budget, modelWindow, minimum, others(), window, state, overflow !== null);
    }
  }

  const event = window.move === null ? null : windowEvent(iteration, window.move, counting.on ? state.calibration : null, overflow ?? undefined);
  const messages = assemble(config, blocks, window);
  const estimatedTokens = counting.on ? blocksSize(blocks, meter) + toolsSize(env.tools, meter) + window.rawTokens + REPLY_PRIMING : estimated;
  logAccount(env, config, blocks, window, { meter, counted: counting.on, state, modelWindow, budget, estimatedTokens, event });
  return { messages, windowEvent: event, estimatedTokens, estimatedBy: counting.on ? meter.counterName : estimated === null ? null : BYTES_ESTIMATE };
}

interface EstimateInput {
  config: ContextConfig;
  env: ContextEnv;
  variables: PathVariables;
  own: JournalBudget;
  state: WindowState;
  segments: ReturnType<typeof journalSegments>;
  meter: ContextMeter;
  /** Tokens the window leaves the request once the reply's are kept. */
  room: number;
  window: JournalWindow;
  blocks: Block[];
}

/**
 * The window sized by the three-bytes-a-token estimate, scaled by the provider's count of the
 * previous request, when that keeps the request far enough below `room` (request-estimate.ts);
 * the window moves on the estimate when it must. Null when only a tokenizer's count can tell:
 * then even the smallest window the estimate allows is too near the limit.
 */
async function estimateWindow(input: EstimateInput): Promise<{ window: JournalWindow; blocks: Block[]; tokens: number } | null> {
  const { config, env, variables, own, state, segments, meter } = input;
  const estimateOf = (entry: JournalEntry): number => meter.entryEstimate(entry);
  const others = (blocks: readonly Block[]): number => blocksEstimate(blocks) + estimateTokens(toolsSize(env.tools, null)) + REPLY_PRIMING;
  const limit = estimateRoom(input.room, state.lastEstimate);
  let { blocks } = input;
  let window = windowJournal(env.events, own, estimateOf, state, segments);
  if (others(blocks) + window.rawTokens <= limit) return { window, blocks, tokens: others(blocks) + window.rawTokens };
  // Limits in the provider's tokens, counts in estimated ones: the scale is the calibration between them.
  const scale = estimateScale(state.lastEstimate);
  const first = window.first;
  window = windowJournal(env.events, { ...own, windowTokens: (limit - others(blocks)) * scale }, estimateOf, { ...state, calibration: scale }, segments);
  if (window.first !== first && config.sources.some((source) => source.type === "computed_file")) blocks = await readBlocks(config, env, variables, window.first);
  const tokens = others(blocks) + window.rawTokens;
  return tokens <= limit ? { window, blocks, tokens } : null;
}

function blocksEstimate(blocks: readonly Block[]): number {
  let size = 0;
  for (const block of blocks) if (block.message) size += messageEstimate(block.message);
  return size;
}

/** Tokens every chat prompt costs beside its messages (the reply's opening), as OpenAI counts them. */
const REPLY_PRIMING = 3;

/** Characters the conversation's messages hold: all user messages', and each iteration's (its reply, calls and results). */
interface ConversationTally {
  user: number;
  /** By iteration number; iterations that never held a message stay 0. */
  byIteration: number[];
  total: number;
}

const conversationFold: EventFold<ConversationTally> = {
  initial: () => ({ user: 0, byIteration: [], total: 0 }),
  step(tally, event) {
    switch (event.type) {
      case "USER_MESSAGE":
        tally.user += event.content.length + MESSAGE_OVERHEAD_TOKENS;
        return tally;
      case "THOUGHT": {
        const calls = event.tool_calls.reduce((sum, call) => sum + call.arguments.length, 0);
        return addToIteration(tally, event.iteration, (event.content?.length ?? 0) + calls + MESSAGE_OVERHEAD_TOKENS);
      }
      case "ACTION_RESULT":
        return addToIteration(tally, event.iteration, event.observation_content.length + MESSAGE_OVERHEAD_TOKENS);
      case "ENGINE_START":
      case "LLM_ATTEMPT_FAILED":
      case "ACTION_REQUEST":
      case "HUMAN_INPUT_REQUEST":
      case "HUMAN_INPUT_RECEIVED":
      case "ERROR":
      case "CONTEXT_WINDOW":
      case "HOOK_RESULT":
      case "ENGINE_END":
        return tally;
      default: {
        const unknown: never = event;
        throw new Error(`conversation tally: unhandled event ${JSON.stringify(unknown)}`);
      }
    }
  },
};

function addToIteration(tally: ConversationTally, iteration: number, chars: number): ConversationTally {
  while (tally.byIteration.length <= iteration) tally.byIteration.push(0);
  tally.byIteration[iteration]! += chars;
  tally.total += chars;
  return tally;
}

/**
 * Characters of the conversation from `first` on (user messages, replies and their calls, results):
 * near enough its bytes for the log's estimate, folded incrementally so a long run's log costs no
 * pass over the journal; a move of the window sums the iterations on the shorter side of `first`.
 */
function conversationChars(events: readonly JournalEvent[], first: number): number {
  const tally = foldIncrementally(conversationFold, events);
  const { byIteration } = tally;
  let shown = 0;
  if (first < byIteration.length - first) {
    shown = tally.total;
    for (let iteration = 0; iteration < first; iteration += 1) shown -= byIteration[iteration]!;
  } else {
    for (let iteration = Math.max(first, 0); iteration < byIteration.length; iteration += 1) shown += byIteration[iteration]!;
  }
  return tally.user + shown;
}

/** The engine's count (before calibration) of a request it sent without counting: on an overflow, to learn from the server's. */
export async function countRequest(model: string, messages: readonly ChatMessage[], tools: readonly FunctionTool[]): Promise<number> {
  const meter = new ContextMeter(model);
  await meter.load();
  return messages.reduce((sum, message) => sum + meter.messageTokens(message), 0) + toolsSize(tools, meter) + REPLY_PRIMING;
}

interface WindowFacts {
  state: WindowState;
  /** The window requests keep within: the configured or known one, or what an overflow taught the run. */
  window: number | null;
  /** Set on the retry after an overflow: what the CONTEXT_WINDOW event records. */
  overflow: { window_tokens: number; sent_estimate: number; server_limit_tokens?: number; server_requested_tokens?: number } | null;
}

/**
 * The journal's window state, and on an overflow what the server taught: its count of our request
 * calibrates ours when it is believable, its window is believed when its count was, and
 * otherwise the run keeps to OVERFLOW_SHRINK of what it sent.
 */
function windowFacts(env: ContextEnv, budget: ContextBudget): WindowFacts {
  const state = windowState(env.events);
  const known = smallestOf(budget.contextWindow, state.learnedWindow);
  if (!env.overflow) return { state, window: known, overflow: null };
  const { sizes, sentEstimate } = env.overflow;
  const trusted = sizes.requestedTokens === undefined ? null : trustedRatio(sizes.requestedTokens, sentEstimate);
  const calibration = trusted ?? state.calibration;
  // A server checks the prompt and the reply's max_tokens together against its window.
  const sent = Math.ceil(sentEstimate * calibration) + (budget.maxReplyTokens ?? 0);
  const serverWindow = trusted !== null && sizes.limitTokens !== undefined && sizes.limitTokens < sent ? sizes.limitTokens : null;
  const learned = Math.max(1, Math.min(serverWindow ?? Math.floor(sent * OVERFLOW_SHRINK), known ?? Number.POSITIVE_INFINITY));
  return {
    state: { ...state, calibration, learnedWindow: learned },
    window: learned,
    overflow: {
      window_tokens: learned,
      sent_estimate: sentEstimate,
      ...(sizes.limitTokens !== undefined ? { server_limit_tokens: sizes.limitTokens } : {}),
      ...(sizes.requestedTokens !== undefined ? { server_requested_tokens: sizes.requestedTokens } : {}),
    },
  };
}

function smallestOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

function nextIteration(events: readonly JournalEvent[]): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!;
    if (event.type === "THOUGHT") return event.iteration + 1;
  }
  return 1;
}

/** A `file`, `computed_file` or `skills` source's system message, or null when it adds nothing. */
interface Block {
  index: number;
  source: BlockSource;
  message: ChatMessage | null;
  /** For engine.log: the file read and how it went. */
  where: string;
}

async function readBlocks(config: ContextConfig, env: ContextEnv, variables: PathVariables, firstIteration: number): Promise<Block[]> {
  const blocks: Block[] = [];
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
    blocks.push({ index, source, message: { role: "system", content: isSystemPrompt ? content : `# Context Block: ${blockName(source)}\n\n${content}` }, where });
  }
  return blocks;
}

function assemble(config: ContextConfig, blocks: readonly Block[], window: JournalWindow): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let next = 0;
  for (const [index, source] of config.sources.entries()) {
    if (source.type === "journal") {
      // One by one: spreading a long run's messages into push() would put every one of them on the stack.
      for (const message of window.messages) messages.push(message);
      continue;
    }
    const block = blocks[next++];
    if (block?.index === index && block.message) messages.push(block.message);
  }
  return messages;
}

/** Raw size of the sources' messages: tokens with a loaded meter, else bytes (their upper bound). */
function blocksSize(blocks: readonly Block[], meter: ContextMeter | null): number {
  let size = 0;
  for (const block of blocks) if (block.message) size += meter ? meter.messageTokens(block.message) : messageSize(block.message);
  return size;
}

const toolsJson = new WeakMap<object, string>();

function toolsSize(tools: readonly FunctionTool[] | undefined, meter: ContextMeter | null): number {
  if (!tools || tools.length === 0) return 0;
  let json = toolsJson.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    toolsJson.set(tools, json);
  }
  return meter ? meter.textTokens(json) : Buffer.byteLength(json, "utf8");
}

function tooLong(budget: ContextBudget, modelWindow: number, minimum: number, others: number, window: JournalWindow, state: WindowState, learned: boolean): ContextOverflowError {
  const need = Math.ceil(minimum);
  const reserve = replyReserve(budget.maxReplyTokens, modelWindow);
  const which = learned ? "the window the server's refusal leaves" : "the model's window";
  return new ContextOverflowError(
    `The smallest context this run can send needs ${need} tokens — the other sources and the tool definitions ${Math.ceil(others)}, ` +
      `the user messages and the last iteration ${Math.ceil(window.rawMinimum * state.calibration)} — but ${which}, ${modelWindow} tokens, ` +
      `leaves ${Math.max(0, modelWindow - reserve)} once ${reserve} are kept for the reply. ` +
      "Shorten the context files or the task, lower llm.max_tokens, or set llm.context_window in agent.yaml if the model accepts more; then `delta continue`.",
    { limitTokens: modelWindow, requestedTokens: need + reserve },
  );
}

interface Account {
  meter: ContextMeter;
  counted: boolean;
  state: WindowState;
  modelWindow: number | null;
  budget: ContextBudget;
  estimatedTokens: number | null;
  event: NewEvent | null;
}

/** engine.log (and -v): each source's tokens, what the window dropped, and the request against the budget. */
function logAccount(env: ContextEnv, config: ContextConfig, blocks: readonly Block[], window: JournalWindow, account: Account): void {
  const log = env.log;
  if (!log) return;
  const { meter, counted, state } = account;
  const tokens = (raw: number): string => (counted ? `${Math.ceil(raw * state.calibration)} tokens` : `≈${ContextMeter.estimate(raw)} tokens`);
  for (const block of blocks) {
    const size = block.message ? `, ${tokens(counted ? meter.messageTokens(block.message) : messageSize(block.message))}` : "";
    log(`context: ${describe(block.source, block.index)} ${block.where}${size}`);
  }
  for (const [index, source] of config.sources.entries()) {
    if (source.type !== "journal") continue;
    const dropped = window.first > 1 ? `; iterations before ${window.first} dropped` : "";
    log(`context: ${describe(source, index)} → ${window.messages.length} messages, ${tokens(window.rawTokens)}${dropped}`);
  }
  if (account.event?.type === "CONTEXT_WINDOW") {
    const move = account.event;
    log(`context: window moved (${move.reason}, limit ${move.limit}): iterations ${move.dropped_from}–${move.dropped_to} dropped, shown from ${move.first_iteration}`);
  }
  if (counted && account.estimatedTokens !== null) {
    const room = account.modelWindow === null ? "" : ` of the ${account.modelWindow - replyReserve(account.budget.maxReplyTokens, account.modelWindow)} the window leaves`;
    log(`context: request ${Math.ceil(account.estimatedTokens * state.calibration)} tokens${room} (${meter.counterName ?? "estimate"}, calibration ×${state.calibration.toFixed(2)})`);
  }
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

type BlockSource = FileSource | ComputedFileSource | SkillsSource;

async function readSource(source: BlockSource, index: number, variables: PathVariables, env: ContextEnv, firstIteration: number): Promise<SourceRead> {
  switch (source.type) {
    case "file":
      return readFileSource(source, index, variables);
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

async function readFileSource(source: FileSource, index: number, variables: PathVariables): Promise<SourceRead> {
  const file = fileSourceFile(source, index, variables);
  return { path: file.path, content: await readSourceFile(file), ran: "" };
}

async function readComputedSource(source: ComputedFileSource, index: number, variables: PathVariables, env: ContextEnv, firstIteration: number): Promise<SourceRead> {
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
      [WINDOW_FIRST_ITERATION_ENV]: String(firstIteration),
    },
    timeoutMs: source.generator.timeout_ms,
    ...(env.baseEnv ? { baseEnv: env.baseEnv() } : {}),
    sandbox: env.sandbox,
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
  return { path, content, ran: `generator ran in ${durationMs} ms; ` };
}

function blockName(source: BlockSource): string {
  if (source.type === "skills") return source.id ?? "skills";
  return source.id ?? basename(source.type === "file" ? source.path : source.output_path);
}

function describe(source: ContextSource, index: number): string {
  return `'${source.id ?? source.type}' (sources[${index}])`;
}
