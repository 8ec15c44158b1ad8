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

const EPHEMERAL = { type: "ephemeral" };

/** A block's place: in the tools or the system prompt, or in a message. */
type Place = { list: "tools" | "system"; index: number } | { message: number; block: number };

/**
 * The parts with `cache_control: {type: "ephemeral"}` on:
 *  - the last system block (else the last tool): tools and system prompt, the same in every request of a run;
 *  - the last journal block of the newest message: the next request, the same conversation plus one
 *    turn, reads everything up to here from the cache;
 *  - the previous turn's last journal block too, when more than 20 blocks came since (many parallel
 *    tool calls): Anthropic looks back only 20 blocks from a breakpoint for the entry the previous
 *    request wrote there.
 * Thinking blocks cannot carry cache_control and are never marked. A marked block (and the message
 * holding it) is a copy: the parts given stay as they were, so wire forms kept from one request to
 * the next (request-body.ts) never carry an older request's marks.
 */
export function withCacheBreakpoints(parts: CachedParts): CachedParts {
  const marks: Place[] = [];
  if (parts.system.length > 0) marks.push({ list: "system", index: parts.system.length - 1 });
  else if (parts.tools.length > 0) marks.push({ list: "tools", index: parts.tools.length - 1 });
  const ends = parts.messages.flatMap((message, index) => {
    const block = lastStableBlock(message.content, parts.stableBlocks[index] ?? 0);
    return block === -1 ? [] : [{ message: index, block }];
  });
  const newest = ends.at(-1);
  if (newest) {
    marks.push(newest);
    const role = parts.messages[newest.message]?.role;
    const previous = ends.filter((end) => end.message < newest.message && parts.messages[end.message]?.role === role).at(-1);
    if (previous && blocksBetween(parts.messages, previous, newest) > LOOKBACK_BLOCKS) marks.push(previous);
  }
  const marked = { ...parts, tools: [...parts.tools], system: [...parts.system], messages: [...parts.messages] };
  for (const place of marks.slice(0, MAX_CACHE_BREAKPOINTS)) {
    if ("list" in place) {
      const list = marked[place.list];
      list[place.index] = { ...list[place.index], cache_control: EPHEMERAL };
      continue;
    }
    const message = marked.messages[place.message]!;
    const content = [...message.content];
    content[place.block] = { ...content[place.block], cache_control: EPHEMERAL };
    marked.messages[place.message] = { role: message.role, content };
  }
  return marked;
}

/** The index of the last block among the first `stable` that may carry a mark, or -1. */
function lastStableBlock(content: Block[], stable: number): number {
  for (let index = Math.min(stable, content.length) - 1; index >= 0; index -= 1) {
    const type = content[index]!.type;
    if (type !== "thinking" && type !== "redacted_thinking") return index;
  }
  return -1;
}

/** Blocks after `from`'s block up to and including `to`'s. */
function blocksBetween(messages: WireMessage[], from: { message: number; block: number }, to: { message: number; block: number }): number {
  let count = 0;
  for (let index = from.message; index <= to.message; index += 1) {
    const length = messages[index]?.content.length ?? 0;
    const start = index === from.message ? from.block + 1 : 0;
    const end = index === to.message ? to.block + 1 : length;
    count += Math.max(0, end - start);
  }
  return count;
}
