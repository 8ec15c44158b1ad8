// Recognises "the conversation is longer than the model's window" in any provider's words, so the engine can tell it from other refusals.
import type { ContextOverflow } from "../errors.js";
import type { ServerWords } from "./server-words.js";

const OVERFLOW_CODES = new Set(["context_length_exceeded", "model_context_window_exceeded", "exceed_context_size_error"]);

// Each server's phrasing: OpenAI, DeepSeek, vLLM and OpenRouter ("maximum context length"), Anthropic,
// Gemini, Ollama's cloud, Mistral, llama.cpp, OpenAI Responses and Ollama ("exceeds the context …"),
// TGI and Together, Moonshot, xAI, vLLM's newer wording, Groq, Anthropic's prompt and max_tokens
// together ("input length and `max_tokens` exceed context limit"), SGLang.
const OVERFLOW_PATTERNS = [
  /maximum context length/i,
  /context[ _]length[ _]exceeded/i,
  /prompt is too long/i,
  /input token count.*exceeds the maximum/i,
  /prompt too long|exceeded max context length/i,
  /too large for model with \d+ maximum context length/i,
  /exceeds? the (available )?context (size|window|length)/i,
  /`inputs` tokens \+ `max_new_tokens` must be <=/i,
  /exceeded model token limit/i,
  /maximum prompt length is/i,
  /longer than the model's context length/i,
  /reduce the length of the messages/i,
  /exceed context limit/i,
  /input length \(\d+ tokens\) exceeds the maximum allowed length/i,
];

// A rate limit counted in tokens ("Request too large … tokens per minute") is not a window overflow.
const RATE_LIMIT = /tokens per (minute|day)|\bTPM\b|\bTPD\b|rate[ _-]?limit/i;

/** The overflow a refusal reports, or null when it is about something else. */
export function contextOverflow(status: number, words: ServerWords | undefined): ContextOverflow | null {
  if (!words || status === 429 || status >= 500) return null;
  const { message, code } = words;
  if (RATE_LIMIT.test(message)) return null;
  if (!(code !== undefined && OVERFLOW_CODES.has(code)) && !OVERFLOW_PATTERNS.some((pattern) => pattern.test(message))) return null;
  return sizesOf(message);
}

function sizesOf(message: string): ContextOverflow {
  // Anthropic: "… exceed context limit: 199759 + 8192 > 200000": the prompt and max_tokens against the window.
  const sum = /context limit: (\d+) \+ (\d+) > (\d+)/.exec(message);
  if (sum) return { limitTokens: Number(sum[3]), requestedTokens: Number(sum[1]) + Number(sum[2]) };
  const number = (pattern: RegExp): number | undefined => {
    const found = pattern.exec(message)?.[1];
    return found === undefined ? undefined : Number(found);
  };
  const limit =
    number(/maximum context length (?:is|of) (\d+)/i) ??
    number(/(\d+) maximum context length/i) ??
    number(/> (\d+) maximum/i) ??
    number(/maximum number of tokens allowed \((\d+)\)/i) ??
    number(/must be <= (\d+)/i) ??
    number(/maximum prompt length is (\d+)/i) ??
    number(/maximum allowed length \((\d+) tokens\)/i);
  const requested =
    number(/(?:resulted in|you requested|requested about|contains) (\d+) tokens/i) ??
    number(/too long: (\d+) tokens/i) ??
    number(/input token count \((\d+)\)/i) ??
    number(/request contains (\d+) tokens/i) ??
    number(/input length \((\d+) tokens\)/i);
  return { ...(limit !== undefined ? { limitTokens: limit } : {}), ...(requested !== undefined ? { requestedTokens: requested } : {}) };
}
