// A model server on 127.0.0.1 that answers at once: `echo` tool calls until a run has had its turns, then a final text.
//
// The run's user message says `turns=<N> key=<K>`. Each model call k (1-based) below N asks the
// `echo` tool to print `<k>/<N>`; the echo's output comes back as the last tool message, which
// tells the server how far the run has got even when context.yaml shows only a window of the
// journal. Call N answers with text, which completes the run. Arrival times (performance.now())
// are kept per key, so the benchmark can time the engine between model calls.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";

export async function startModelServer() {
  const arrivals = new Map();
  const sockets = new Set();
  const server = createServer((req, res) => {
    const at = performance.now();
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return send(res, 400, { error: { message: "bench model server: body is not JSON" } });
      }
      const step = nextStep(body.messages ?? []);
      if (!step) return send(res, 400, { error: { message: "bench model server: no `turns=N key=K` user message" } });
      if (!arrivals.has(step.key)) arrivals.set(step.key, []);
      arrivals.get(step.key).push(at);
      send(res, 200, completion(body.model, step));
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
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Which call of which run this is, and whether it should finish the run. */
export function nextStep(messages) {
  const user = messages.find((message) => message.role === "user" && /turns=\d+ key=\S+/.test(message.content ?? ""));
  if (!user) return null;
  const [, turns, key] = /turns=(\d+) key=(\S+)/.exec(user.content);
  const lastTool = [...messages].reverse().find((message) => message.role === "tool");
  const done = lastTool ? Number(/(\d+)\/\d+/.exec(lastTool.content ?? "")?.[1] ?? 0) : 0;
  const call = done + 1;
  return { key, call, turns: Number(turns), final: call >= Number(turns) };
}

function completion(model, step) {
  const message = step.final
    ? { role: "assistant", content: "done" }
    : {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_${step.call}`, type: "function", function: { name: "echo", arguments: JSON.stringify({ text: `${step.call}/${step.turns}` }) } }],
      };
  return {
    id: `chatcmpl-bench-${step.call}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: model ?? "bench-model",
    choices: [{ index: 0, message, finish_reason: step.final ? "stop" : "tool_calls" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
