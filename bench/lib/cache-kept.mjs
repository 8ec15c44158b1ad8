// What a provider's prompt cache could serve of a run's requests: the share of each request that repeats the previous one from its start.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

const AS_TEXT = { disallowedSpecial: new Set() };
/** As the engine counts a message beside its text (role and separators). */
const MESSAGE_OVERHEAD = 4;

/**
 * `prompts`: each request's messages as the JSON the server received, in order.
 * - `kept`: over the run, the bytes of each request that repeat the previous request from its first
 *   byte, divided by the previous request's size (the "cache kept");
 * - `tokensSent`: prompt tokens of all requests (o200k_base, the text of each message plus 4);
 * - `servable`: of those, the share in leading messages identical to the previous request's, which
 *   a prefix cache could serve;
 * - `changed`: requests that do not start with the whole previous one.
 */
export function cacheKept(prompts) {
  const counts = new Map();
  const tokensOf = (message) => {
    const key = JSON.stringify(message);
    let tokens = counts.get(key);
    if (tokens === undefined) {
      tokens = MESSAGE_OVERHEAD + textsOf(message).reduce((sum, text) => sum + countTokens(text, AS_TEXT), 0);
      counts.set(key, tokens);
    }
    return tokens;
  };
  let repeated = 0;
  let previousBytes = 0;
  let tokensSent = 0;
  let servable = 0;
  let changed = 0;
  let previous = null;
  for (const prompt of prompts) {
    const bytes = Buffer.from(prompt);
    const messages = JSON.parse(prompt);
    const tokens = messages.map(tokensOf);
    tokensSent += tokens.reduce((sum, n) => sum + n, 0);
    if (previous !== null) {
      const common = commonPrefix(previous.bytes, bytes);
      repeated += common;
      previousBytes += previous.bytes.length;
      // The closing bracket of the previous array is all that differs when a request only grows.
      if (common < previous.bytes.length - 1) changed += 1;
      for (let index = 0; index < messages.length && index < previous.messages.length; index += 1) {
        if (JSON.stringify(messages[index]) !== JSON.stringify(previous.messages[index])) break;
        servable += tokens[index];
      }
    }
    previous = { bytes, messages };
  }
  return { kept: previousBytes === 0 ? 1 : repeated / previousBytes, tokensSent, servable: tokensSent === 0 ? 0 : servable / tokensSent, changed, requests: prompts.length };
}

function commonPrefix(a, b) {
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a[index] === b[index]) index += 1;
  return index;
}

function textsOf(message) {
  const texts = [];
  if (typeof message.content === "string") texts.push(message.content);
  for (const call of message.tool_calls ?? []) texts.push(call.function?.name ?? "", call.function?.arguments ?? "");
  return texts;
}
