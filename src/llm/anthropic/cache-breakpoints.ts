// Where an Anthropic request asks for its prompt to be cached: after the tools and system prompt, and after the newest message of the conversation (at most 4, Anthropic's limit).
type Block = Record<string, unknown>;

export interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

export interface CachedParts {
  tools: Block[];
  system: Block[];
  messages: WireMessage[];
  /** Per message, how many of its first blocks come from the journal (the same in the next request); the rest are context blocks re-read every iteration. */
  stableBlocks: number[];
}

/** Anthropic refuses a request with more cache_control blocks than this. */
export const MAX_CACHE_BREAKPOINTS = 4;

/** How far back from a breakpoint Anthropic looks for an earlier cache entry, in blocks. */
const LOOKBACK_BLOCKS = 20;

/**
 * Marks with `cache_control: {type: "ephemeral"}`:
 *  - the last system block (else the last tool): tools and system prompt, the same in every request of a run;
 *  - the last journal block of the newest message: the next request, the same conversation plus one
 *    turn, reads everything up to here from the cache;
 *  - the previous turn's last journal block too, when more than 20 blocks came since (many parallel
 *    tool calls): Anthropic looks back only 20 blocks from a breakpoint for the entry the previous
 *    request wrote there.
 * Thinking blocks cannot carry cache_control and are never marked.
 */
export function placeCacheBreakpoints(parts: CachedParts): void {
  const marks: Block[] = [];
  const prefix = parts.system.at(-1) ?? parts.tools.at(-1);
  if (prefix) marks.push(prefix);
  const ends = parts.messages.map((message, index) => ({ index, block: lastStableBlock(message.content.slice(0, parts.stableBlocks[index] ?? 0)) })).filter((end) => end.block !== undefined);
  const newest = ends.at(-1);
  if (newest?.block) {
    marks.push(newest.block);
    const previous = ends.filter((end) => end.index < newest.index && parts.messages[end.index]?.role === parts.messages[newest.index]?.role).at(-1);
    if (previous?.block && blocksBetween(parts.messages, previous, newest) > LOOKBACK_BLOCKS) marks.push(previous.block);
  }
  for (const block of marks.slice(0, MAX_CACHE_BREAKPOINTS)) block.cache_control = { type: "ephemeral" };
}

function lastStableBlock(stable: Block[]): Block | undefined {
  return stable.filter((block) => block.type !== "thinking" && block.type !== "redacted_thinking").at(-1);
}

/** Blocks after `from`'s block up to and including `to`'s. */
function blocksBetween(messages: WireMessage[], from: { index: number; block?: Block }, to: { index: number; block?: Block }): number {
  let count = 0;
  for (let index = from.index; index <= to.index; index += 1) {
    const content = messages[index]?.content ?? [];
    const start = index === from.index ? content.indexOf(from.block!) + 1 : 0;
    const end = index === to.index ? content.indexOf(to.block!) + 1 : content.length;
    count += Math.max(0, end - start);
  }
  return count;
}
