// A model server on 127.0.0.1 that answers at once, in Chat Completions, Anthropic Messages or OpenAI Responses: `echo` tool calls until a run has had its turns, then a final text.
//
// The run's user message says `turns=<N> key=<K>`. Each model call k (1-based) below N asks the
// `echo` tool to print `<k>/<N>`; the echo's output comes back as the last tool result, which
// tells the server how far the run has got even when context.yaml shows only a window of the
// journal. Call N answers with text, which completes the run. Arrival times (performance.now())
// and the request bodies are kept per key, so the benchmark can time the engine between model
// calls and measure how much of each request repeats the previous one. The protocol is chosen by
// the path: /chat/completions, /messages (Anthropic) or /responses (OpenAI Responses).
// With `tool=read` in the message, Chat Completions calls go to `read` instead, with an `offset`
// argument that differs each call (the cache rows' 2 KB observations).
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

// What a reasoning model's encrypted reasoning item weighs: the Responses replies carry one, and the engine must send each back.
const ENCRYPTED_REASONING = `gAAAAAB${"x".repeat(600)}`;

export async function startModelServer() {
  const arrivals = new Map();
  const replied = new Map();
  const bodies = new Map();
  const sockets = new Set();
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        return send(res, 400, { error: { message: "bench model server: body is not JSON" } });
      }
      const protocol = PROTOCOLS.find((candidate) => req.url?.split("?")[0].endsWith(candidate.path));
      if (!protocol) return send(res, 404, { error: { message: `bench model server: no route for ${req.url}` } });
      const step = nextStep(protocol.messages(body));
      if (!step) return send(res, 400, { error: { message: "bench model server: no `turns=N key=K` user message" } });
      if (!arrivals.has(step.key)) arrivals.set(step.key, []);
      arrivals.get(step.key).push(at);
      if (!bodies.has(step.key)) bodies.set(step.key, []);
      bodies.get(step.key).push(text);
      // Prompt tokens as a provider reports them, about four bytes of the body a token: the engine sizes later requests by them.
      step.promptTokens = Math.ceil(Buffer.byteLength(text) / 4);
      send(res, 200, protocol.reply(body.model ?? "bench-model", step, toolOf(protocol.messages(body))));
      if (!replied.has(step.key)) replied.set(step.key, []);
      replied.get(step.key).push(performance.now());
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    /** performance.now() of every model request of the run with this key, in order. */
    arrivals: (key) => arrivals.get(key) ?? [],
    /** performance.now() when each reply of the run with this key was sent, in order. */
    replied: (key) => replied.get(key) ?? [],
    /** The body text of every model request of the run with this key, in order. */
    bodies: (key) => bodies.get(key) ?? [],
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Which call of which run this is, and whether it should finish the run; `messages` in Chat Completions roles. */
export function nextStep(messages) {
  const user = messages.find((message) => message.role === "user" && /turns=\d+ key=\S+/.test(message.content ?? ""));
  if (!user) return null;
  const [, turns, key] = /turns=(\d+) key=(\S+)/.exec(user.content);
  const lastTool = [...messages].reverse().find((message) => message.role === "tool");
  const done = lastTool ? Number(/(\d+)\/\d+/.exec(lastTool.content ?? "")?.[1] ?? 0) : 0;
  const call = done + 1;
  return { key, call, turns: Number(turns), final: call >= Number(turns) };
}

const PROTOCOLS = [
  { path: "/chat/completions", messages: (body) => body.messages ?? [], reply: chatCompletion },
  { path: "/messages", messages: anthropicMessages, reply: anthropicMessage },
  { path: "/responses", messages: responsesMessages, reply: responsesResponse },
];

/** An Anthropic conversation's text and tool results, in Chat Completions roles. */
export function anthropicMessages(body) {
  return (body.messages ?? []).flatMap((message) =>
    (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content ?? []).flatMap((block) => {
      if (block.type === "text") return [{ role: message.role, content: block.text }];
      if (block.type === "tool_result") return [{ role: "tool", content: typeof block.content === "string" ? block.content : "" }];
      return [];
    }),
  );
}

/** A Responses input's messages and function call outputs, in Chat Completions roles. */
export function responsesMessages(body) {
  return (body.input ?? []).flatMap((item) => {
    if (item.type === "function_call_output") return [{ role: "tool", content: item.output }];
    if (typeof item.role === "string" && typeof item.content === "string") return [{ role: item.role, content: item.content }];
    return [];
  });
}

/** The tool a run's calls go to: `read` when its message says `tool=read`, else `echo`. */
function toolOf(messages) {
  return messages.some((message) => message.role === "user" && / tool=read\b/.test(message.content ?? "")) ? "read" : "echo";
}

function chatCompletion(model, step, tool) {
  const args = tool === "read" ? JSON.stringify({ text: `${step.call}/${step.turns}`, offset: String(1 + ((step.call * 2_003) % 100_000)) }) : echoArguments(step);
  const message = step.final
    ? { role: "assistant", content: "done" }
    : {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_${step.call}`, type: "function", function: { name: tool, arguments: args } }],
      };
  return {
    id: `chatcmpl-bench-${step.call}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, finish_reason: step.final ? "stop" : "tool_calls" }],
    usage: { prompt_tokens: step.promptTokens, completion_tokens: 5, total_tokens: step.promptTokens + 5 },
  };
}

function anthropicMessage(model, step) {
  return {
    id: `msg_bench_${step.call}`,
    type: "message",
    role: "assistant",
    model,
    content: step.final ? [{ type: "text", text: "done" }] : [{ type: "tool_use", id: `toolu_${step.call}`, name: "echo", input: { text: `${step.call}/${step.turns}` } }],
    stop_reason: step.final ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: { input_tokens: step.promptTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 },
  };
}

function responsesResponse(model, step) {
  const reasoning = { id: `rs_bench_${step.call}`, type: "reasoning", encrypted_content: ENCRYPTED_REASONING, summary: [] };
  const answer = step.final
    ? { id: `msg_bench_${step.call}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text: "done" }] }
    : { id: `fc_bench_${step.call}`, type: "function_call", status: "completed", arguments: echoArguments(step), call_id: `call_${step.call}`, name: "echo" };
  return {
    id: `resp_bench_${step.call}`,
    object: "response",
    status: "completed",
    model,
    output: [reasoning, answer],
    usage: { input_tokens: step.promptTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: step.promptTokens + 5 },
  };
}

function echoArguments(step) {
  return JSON.stringify({ text: `${step.call}/${step.turns}` });
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
