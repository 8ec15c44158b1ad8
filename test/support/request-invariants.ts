// What every model request must hold whatever came before it, per wire protocol: each tool result answers a call of the assistant turn before it, every call is answered once, and each protocol's own rules. The mock model server checks each request it gets.

type Json = Record<string, unknown>;
export type WireProtocol = "chat-completions" | "anthropic" | "openai-responses";

const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** Chat Completions: tool messages follow the assistant message whose calls they answer, one each, before anything else. */
function chatCompletionsViolations(body: unknown): string[] {
  if (!isJson(body) || !Array.isArray(body.messages)) return ["the body has no messages"];
  const problems: string[] = [];
  const messages = body.messages as Json[];
  let open: string[] = [];
  let openAt = -1;
  const answered = new Set<string>();
  messages.forEach((message, index) => {
    if (!isJson(message)) {
      problems.push(`message ${index} is not an object`);
      return;
    }
    if (message.role === "tool") {
      const id = String(message.tool_call_id);
      if (!open.includes(id)) problems.push(`message ${index} (tool) answers '${id}', which is not a call of the assistant message before it`);
      else if (answered.has(id)) problems.push(`message ${index} (tool) answers '${id}' a second time`);
      answered.add(id);
      return;
    }
    const unanswered = open.filter((id) => !answered.has(id));
    if (unanswered.length > 0) problems.push(`the calls ${JSON.stringify(unanswered)} of message ${openAt} have no tool result before message ${index}`);
    open = [];
    // Ids are unique within a turn only: a conversation may reuse one (two servers, two runs of one mock).
    answered.clear();
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      open = (message.tool_calls as Json[]).map((call) => String(call.id));
      openAt = index;
      if (new Set(open).size !== open.length) problems.push(`message ${index} has two calls with one id`);
    }
  });
  const unanswered = open.filter((id) => !answered.has(id));
  if (unanswered.length > 0) problems.push(`the calls ${JSON.stringify(unanswered)} of message ${openAt} have no tool result`);
  return problems;
}

/** Anthropic Messages: roles alternate, a turn's tool_use blocks are answered by the next turn's leading tool_result blocks, in order, and 1 to 4 cache breakpoints. */
export function anthropicRequestViolations(body: unknown): string[] {
  if (!isJson(body) || !Array.isArray(body.messages)) return ["the body has no messages"];
  const problems: string[] = [];
  const messages = body.messages as { role: string; content: Json[] }[];
  if (typeof body.max_tokens !== "number") problems.push("max_tokens is missing");
  messages.forEach((message, index) => {
    if (index > 0 && messages[index - 1]!.role === message.role) problems.push(`messages ${index - 1} and ${index} are both ${message.role}`);
    if (!Array.isArray(message.content)) return;
    const uses = message.content.filter((block) => block.type === "tool_use").map((block) => block.id);
    const next = messages[index + 1];
    const results = (Array.isArray(next?.content) ? next.content : []).filter((block) => block.type === "tool_result").map((block) => block.tool_use_id);
    if (message.role === "assistant" && next && JSON.stringify(results) !== JSON.stringify(uses)) problems.push(`message ${index + 1}'s tool results ${JSON.stringify(results)} do not answer the calls ${JSON.stringify(uses)}`);
    const firstOther = message.content.findIndex((block) => block.type !== "tool_result");
    if (firstOther !== -1 && message.content.slice(firstOther).some((block) => block.type === "tool_result")) problems.push(`message ${index} has a tool result after other blocks`);
  });
  const blocks = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);
  const marked = [...blocks(body.tools), ...blocks(body.system), ...messages.flatMap((message) => blocks(message.content))].filter((block) => block.cache_control !== undefined);
  if (marked.length === 0 || marked.length > 4) problems.push(`${marked.length} cache breakpoints (want 1 to 4)`);
  if (marked.some((block) => block.type === "thinking" || block.type === "redacted_thinking")) problems.push("a thinking block carries cache_control");
  return problems;
}

/**
 * OpenAI Responses: nothing stored; a reasoning item sent back only with its encrypted content and only
 * when encrypted reasoning is asked for (a model that refused it gets neither); each function_call
 * answered once by a later function_call_output.
 */
export function responsesRequestViolations(body: unknown): string[] {
  if (!isJson(body) || !Array.isArray(body.input)) return ["the body has no input"];
  const problems: string[] = [];
  if (body.store !== false) problems.push("store is not false");
  const asksReasoning = Array.isArray(body.include) && body.include.includes("reasoning.encrypted_content");
  // Calls not yet answered, by id: an id may come back in a later turn (two servers, two runs of one mock).
  const pending = new Map<string, number>();
  for (const item of body.input as Json[]) {
    if (item.type === "function_call") pending.set(String(item.call_id), (pending.get(String(item.call_id)) ?? 0) + 1);
    if (item.type === "reasoning" && !asksReasoning) problems.push(`reasoning item ${String(item.id)} is sent back without encrypted reasoning asked for`);
    if (item.type === "reasoning" && typeof item.encrypted_content !== "string") problems.push(`reasoning item ${String(item.id)} is sent back without its encrypted content (store is false: the server cannot find it)`);
    if (item.type === "function_call_output") {
      const id = String(item.call_id);
      const open = pending.get(id) ?? 0;
      if (open === 0) problems.push(`function_call_output ${id} answers no earlier function_call left unanswered`);
      else pending.set(id, open - 1);
    }
  }
  for (const [id, open] of pending) if (open > 0) problems.push(`function_call ${id} has no output`);
  return problems;
}

/** The violations of one request of `protocol`; empty when it holds every rule. */
export function requestViolations(protocol: WireProtocol, body: unknown): string[] {
  switch (protocol) {
    case "chat-completions":
      return chatCompletionsViolations(body);
    case "anthropic":
      return anthropicRequestViolations(body);
    case "openai-responses":
      return responsesRequestViolations(body);
    default: {
      const unknown: never = protocol;
      throw new Error(`no invariants for ${String(unknown)}`);
    }
  }
}
