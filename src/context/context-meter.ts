// Sizes of the context's messages in bytes and tokens: each journal event measured once per process, each source's message and the tools once per build.
import type { ChatMessage } from "../conversation.js";
import type { PartSize } from "./fit.js";
import type { JournalEntry } from "./journal-messages.js";
import { estimateTokens, loadTokenCounter, type TokenCounter } from "./token-counter.js";

/** What a message costs beside its text (role and separators), as OpenAI counts chat prompts: 3 per message, rounded up. */
export const MESSAGE_OVERHEAD_TOKENS = 4;

// Keyed by the journal event a message renders: the reader hands back the same objects every iteration.
const byteCache = new WeakMap<object, number>();
const tokenCache = new WeakMap<object, { counter: string; tokens: number }>();
const textCache = new Map<string, { counter: string; tokens: number }>();
const TEXT_CACHE_ENTRIES = 64;
/** Shorter texts cost less to count than to look up. */
const CACHED_TEXT_CHARS = 256;

/**
 * Measures messages for one run: bytes always (an upper bound of any BPE count: every token is at
 * least one byte), tokens once `load()` has brought the model's counter.
 */
export class ContextMeter {
  private counter: TokenCounter | null = null;

  constructor(private readonly model: string) {}

  /** The counter's name once loaded, else null. */
  get counterName(): string | null {
    return this.counter?.name ?? null;
  }

  async load(): Promise<void> {
    this.counter ??= await loadTokenCounter(this.model);
  }

  /** Bytes of a journal message plus its overhead: never fewer than its tokens. */
  entryBytes(entry: JournalEntry): number {
    return cached(byteCache, entry.source, () => messageBytes(entry.message)) + MESSAGE_OVERHEAD_TOKENS;
  }

  /** The three-bytes-a-token estimate of a journal message plus its overhead: no tokenizer needed. */
  entryEstimate(entry: JournalEntry): number {
    return estimateTokens(cached(byteCache, entry.source, () => messageBytes(entry.message))) + MESSAGE_OVERHEAD_TOKENS;
  }

  /** Tokens of a journal message plus its overhead; needs load(). */
  entryTokens(entry: JournalEntry): number {
    const counter = this.loaded();
    const count = (): number => MESSAGE_OVERHEAD_TOKENS + messageTexts(entry.message).reduce((sum, text) => sum + counter.count(text), 0);
    if (entry.source === null) return count();
    const hit = tokenCache.get(entry.source);
    if (hit?.counter === counter.name) return hit.tokens;
    const tokens = count();
    tokenCache.set(entry.source, { counter: counter.name, tokens });
    return tokens;
  }

  /** Tokens of a source's message (a file, a generator's output) plus its overhead; needs load(). */
  messageTokens(message: ChatMessage): number {
    let tokens = MESSAGE_OVERHEAD_TOKENS;
    for (const text of messageTexts(message)) tokens += this.textTokens(text);
    return tokens;
  }

  /** Tokens of a text; the texts of files and tools, read anew every iteration, are counted once while they stay the same. */
  textTokens(text: string): number {
    const counter = this.loaded();
    if (text.length < CACHED_TEXT_CHARS) return counter.count(text);
    const hit = textCache.get(text);
    if (hit?.counter === counter.name) return hit.tokens;
    const tokens = counter.count(text);
    if (textCache.size >= TEXT_CACHE_ENTRIES) textCache.clear();
    textCache.set(text, { counter: counter.name, tokens });
    return tokens;
  }

  private loaded(): TokenCounter {
    if (!this.counter) throw new Error("ContextMeter: tokens asked for before load()");
    return this.counter;
  }
}

/** A source's message measured once for a build: its bytes (with the overhead) and their estimate; its tokens when counted (messageTokens). */
export function measureMessage(message: ChatMessage): PartSize {
  const bytes = messageBytes(message);
  return { bytes: bytes + MESSAGE_OVERHEAD_TOKENS, estimate: estimateTokens(bytes) + MESSAGE_OVERHEAD_TOKENS, tokens: null };
}

/** A text sent whole (the tool definitions' JSON) measured once for a build; its tokens when counted (textTokens). */
export function measureText(text: string): PartSize {
  const bytes = Buffer.byteLength(text, "utf8");
  return { bytes, estimate: estimateTokens(bytes), tokens: null };
}

function cached(cache: WeakMap<object, number>, key: object | null, measure: () => number): number {
  if (key === null) return measure();
  let value = cache.get(key);
  if (value === undefined) {
    value = measure();
    cache.set(key, value);
  }
  return value;
}

function messageBytes(message: ChatMessage): number {
  let bytes = 0;
  for (const text of messageTexts(message)) bytes += Buffer.byteLength(text, "utf8");
  return bytes;
}

/** Every text of a message that reaches the model: content, reasoning, calls, provider data. */
function messageTexts(message: ChatMessage): string[] {
  const texts: string[] = [];
  if (message.content) texts.push(message.content);
  if (message.role !== "assistant") return texts;
  if (message.reasoning) texts.push(message.reasoning);
  for (const call of message.tool_calls ?? []) texts.push(call.name, call.arguments);
  if (message.provider_data) texts.push(JSON.stringify(message.provider_data));
  return texts;
}
