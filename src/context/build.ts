// Builds the model's messages for one request: reads the sources (sources.ts), measures each part once, fits the journal's window (fit.ts), writes the log's account.
import type { JournalEvent, NewEvent } from "../journal/events.js";
import type { ShownJournal } from "../journal/shown-journal.js";
import type { ChatMessage, FunctionTool } from "../conversation.js";
import type { ContextOverflow } from "../errors.js";
import { contextBudget, type ContextBudget } from "./budget.js";
import { ContextMeter, measureMessage, measureText } from "./context-meter.js";
import { fitContext, REPLY_PRIMING, windowFacts, type FitConversation, type Measure, type PartSize } from "./fit.js";
import { journalConversation, journalSegments, type JournalConversation, type JournalEntry } from "./journal-messages.js";
import { conversationChars, logAccount } from "./log-account.js";
import type { ContextConfig } from "./schema.js";
import { readBlocks, type SourceBlock, type SourcesEnv } from "./sources.js";
import type { JournalBudget, JournalWindow } from "./window-rule.js";
import { BYTES_ESTIMATE } from "../journal/window-state.js";

export interface ContextEnv extends SourcesEnv {
  /** The journal as read this iteration: the events a request can still show, and the window state of all of it. */
  journal: ShownJournal;
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
}

/** The request's messages, each with the journal event it renders (null for a source's block or a placeholder). */
export interface BuiltContext extends JournalConversation {
  /** The CONTEXT_WINDOW event to journal before sending, when the window moved. */
  windowEvent: NewEvent | null;
  /** The engine's count of the request (messages and tools) before calibration, when it counted one. */
  estimatedTokens: number | null;
  /** How it counted: BYTES_ESTIMATE (no tokenizer) or the counter's name; null when it did not. */
  estimatedBy: string | null;
}

/** A source's block with its message's sizes, measured once per read. */
type MeasuredBlock = SourceBlock & { size: PartSize | null };

/**
 * Source order is message order: each `file`, `computed_file` and `skills` source's block
 * (sources.ts), and where the `journal` source stands, the conversation windowed by fit.ts. Tokens
 * are counted only when a limit could be passed (bytes bound every count), so a run far from its
 * limits never loads a tokenizer; each part is measured once per build, journal events once per
 * process. When even the user messages and the last iteration do not fit, the build fails with
 * CONTEXT_OVERFLOW.
 */
export async function buildContext(config: ContextConfig, env: ContextEnv): Promise<BuiltContext> {
  const budget = env.budget ?? contextBudget({ model: "" }, config);
  const meter = new ContextMeter(budget.model);
  const { events } = env.journal;
  const iteration = env.iteration ?? nextIteration(events);
  const { state, window: modelWindow, overflow } = windowFacts(env.journal.window, budget, env.overflow ?? null);
  const own: JournalBudget = {
    ...(budget.maxIterations !== undefined ? { maxIterations: budget.maxIterations } : {}),
    ...(budget.maxTokens !== undefined ? { maxTokens: budget.maxTokens } : {}),
  };
  const read = async (first: number): Promise<MeasuredBlock[]> => (await readBlocks(config, env, first)).map((block) => ({ ...block, size: block.message ? measureMessage(block.message) : null }));
  if (own.maxIterations === undefined && own.maxTokens === undefined && modelWindow === null && overflow === null) {
    // No limit at all: the conversation from the last recorded move on, nothing measured but for the log.
    const window: JournalWindow = { ...journalConversation(events, state.first), first: state.first, rawTokens: conversationChars(events, state.first), rawMinimum: 0, move: null };
    const blocks = await read(window.first);
    if (env.log) logAccount(env.log, config, blocks, window, { counted: false, calibration: state.calibration, counterName: null, modelWindow, budget, estimatedTokens: null, event: null });
    return { ...assemble(config, blocks, window), windowEvent: null, estimatedTokens: null, estimatedBy: null };
  }

  const conversation: FitConversation = { segments: journalSegments(events, state.first), state, size: conversationSizes(meter) };
  const tools = measureText(toolsJson(env.tools));
  const follows = config.sources.some((source) => source.type === "computed_file");
  // The sources as read for each first iteration this build showed generators; files alone are read once.
  const reads = new Map<number, MeasuredBlock[]>();
  if (!follows) reads.set(state.first, await read(state.first));
  let counted = false;
  const countParts = (blocks: readonly MeasuredBlock[]): void => {
    for (const block of blocks) if (block.size && block.message) block.size.tokens ??= meter.messageTokens(block.message);
  };
  const count = async (): Promise<void> => {
    await meter.load();
    counted = true;
    tools.tokens ??= env.tools && env.tools.length > 0 ? meter.textTokens(toolsJson(env.tools)) : 0;
    for (const blocks of reads.values()) countParts(blocks);
  };
  if (overflow) await count();
  const hasJournal = config.sources.some((source) => source.type === "journal");
  for (;;) {
    const fit = fitContext({
      conversation,
      limits: { own, modelWindow: hasJournal ? modelWindow : null, maxReplyTokens: budget.maxReplyTokens, overflow },
      iteration,
      blocks: reads,
      blocksFollowWindow: follows,
      tools,
      counted,
    });
    if (fit.kind === "count") {
      await count();
      continue;
    }
    if (fit.kind === "read") {
      const blocks = await read(fit.first);
      if (counted) countParts(blocks);
      reads.set(fit.first, blocks);
      continue;
    }
    const { window, blocks, event, estimatedTokens, measure } = fit;
    if (env.log) {
      logAccount(env.log, config, blocks, window, { counted: measure === "tokens", calibration: state.calibration, counterName: meter.counterName, modelWindow, budget, estimatedTokens, event });
    }
    return { ...assemble(config, blocks, window), windowEvent: event, estimatedTokens, estimatedBy: estimatedBy(measure, meter) };
  }
}

function estimatedBy(measure: Measure, meter: ContextMeter): string | null {
  if (measure === "tokens") return meter.counterName;
  return measure === "estimate" ? BYTES_ESTIMATE : null;
}

/** Each journal message's size by a measure: an event's is kept for the process (context-meter.ts), a placeholder's for this build. */
function conversationSizes(meter: ContextMeter): FitConversation["size"] {
  const placeholders = new Map<JournalEntry, Partial<Record<Measure, number>>>();
  const measure = (entry: JournalEntry, by: Measure): number => {
    switch (by) {
      case "bytes":
        return meter.entryBytes(entry);
      case "estimate":
        return meter.entryEstimate(entry);
      case "tokens":
        return meter.entryTokens(entry);
      default: {
        const unknown: never = by;
        throw new Error(`unknown measure ${String(unknown)}`);
      }
    }
  };
  return (entry, by) => {
    if (entry.source !== null) return measure(entry, by);
    let sizes = placeholders.get(entry);
    if (sizes === undefined) placeholders.set(entry, (sizes = {}));
    return (sizes[by] ??= measure(entry, by));
  };
}

/** The engine's count (before calibration) of a request it sent without counting: on an overflow, to learn from the server's. */
export async function countRequest(model: string, messages: readonly ChatMessage[], tools: readonly FunctionTool[]): Promise<number> {
  const meter = new ContextMeter(model);
  await meter.load();
  return messages.reduce((sum, message) => sum + meter.messageTokens(message), 0) + (tools.length > 0 ? meter.textTokens(toolsJson(tools)) : 0) + REPLY_PRIMING;
}

function nextIteration(events: readonly JournalEvent[]): number {
  for (let index = events.length - 1; index >= 0; index -= 1) {
    const event = events[index]!;
    if (event.type === "THOUGHT") return event.iteration + 1;
  }
  return 1;
}

function assemble(config: ContextConfig, blocks: readonly SourceBlock[], window: JournalWindow): JournalConversation {
  const messages: ChatMessage[] = [];
  const renderedFrom: JournalConversation["renderedFrom"] = [];
  let next = 0;
  for (const [index, source] of config.sources.entries()) {
    if (source.type === "journal") {
      // One by one: spreading a long run's messages into push() would put every one of them on the stack.
      for (let at = 0; at < window.messages.length; at += 1) {
        messages.push(window.messages[at]!);
        renderedFrom.push(window.renderedFrom[at] ?? null);
      }
      continue;
    }
    const block = blocks[next++];
    if (block?.index === index && block.message) {
      messages.push(block.message);
      renderedFrom.push(null);
    }
  }
  return { messages, renderedFrom };
}

// The tools' JSON, made once per tool list (a run sends the same list every iteration).
const toolsJsonCache = new WeakMap<object, string>();

function toolsJson(tools: readonly FunctionTool[] | undefined): string {
  if (!tools || tools.length === 0) return "";
  let json = toolsJsonCache.get(tools);
  if (json === undefined) {
    json = JSON.stringify(tools);
    toolsJsonCache.set(tools, json);
  }
  return json;
}
