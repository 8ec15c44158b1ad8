#!/usr/bin/env node
// A stand-in model for trying this example without a key: serves the OpenAI Chat Completions API on
// 127.0.0.1 and runs the command given after it with DELTA_BASE_URL pointing there.
//
//   node examples/interactive-shell/scripted-model.mjs delta run --agent examples/interactive-shell -y -m "…"
//
// A recording cannot play this conversation: the session id that `session_start` returns is new
// each time, and the model must pass it back. So the reply is worked out from the request, as a
// model would: it reads the tool results so far, takes the session id from the first, and goes on.
// Needs only Node. Exits with the command's exit code.
import { spawn } from "node:child_process";
import { createServer } from "node:http";

const command = process.argv.slice(2);
if (command.length === 0) {
  process.stderr.write("usage: scripted-model.mjs <command> [args…]  (e.g. delta run --agent examples/interactive-shell -y -m \"…\")\n");
  process.exit(2);
}

/** The next step of the conversation, from the tool results the request carries. */
function nextReply(messages) {
  const results = messages.filter((message) => message.role === "tool").map((message) => message.content ?? "");
  const sessionId = results.length > 0 ? jsonOr(results[0])?.session_id : undefined;
  if (results.length > 0 && typeof sessionId !== "string") return { text: `I could not start a session: ${results[0]}` };
  switch (results.length) {
    case 0:
      return { tools: [["session_start", {}]] };
    case 1:
      return {
        tools: [["session_exec", {
          session_id: sessionId,
          command: "mkdir -p demo && cd demo && echo one > a.txt && echo two two > b.txt && echo three three three > c.txt\nexport REPORT_TITLE='sizes in demo'",
        }]],
      };
    case 2:
      // Runs in the directory and with the variable the previous command left behind.
      return { tools: [["session_exec", { session_id: sessionId, command: 'echo "$REPORT_TITLE ($(basename "$(pwd)"))"\nwc -c a.txt b.txt c.txt' }]] };
    case 3:
      return { tools: [["session_end", { session_id: sessionId }]] };
    default:
      return { text: `Created demo/ with three files; the session kept the directory and the variable between commands:\n${jsonOr(results[2])?.stdout ?? results[2]}` };
  }
}

function jsonOr(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function completion(request, ordinal) {
  const reply = nextReply(request.messages ?? []);
  const toolCalls = (reply.tools ?? []).map(([name, args], index) => ({ id: `call_scripted_${ordinal}_${index + 1}`, type: "function", function: { name, arguments: JSON.stringify(args) } }));
  return {
    id: `chatcmpl-scripted-${ordinal}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: request.model ?? "scripted-model",
    choices: [{ index: 0, message: { role: "assistant", content: reply.text ?? null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: Math.ceil(JSON.stringify(request.messages ?? []).length / 4), completion_tokens: 20, total_tokens: 0 },
  };
}

let served = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    let status = 200;
    let body;
    try {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) throw new Error(`no route for ${req.method} ${req.url}`);
      body = completion(JSON.parse(Buffer.concat(chunks).toString("utf8")), ++served);
    } catch (err) {
      status = 400;
      body = { error: { message: `scripted model: ${err.message}` } };
    }
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  });
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  const child = spawn(command[0], command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, DELTA_BASE_URL: `http://127.0.0.1:${port}/v1`, DELTA_API_KEY: "scripted-model-needs-no-key" },
  });
  const stop = (code) => server.close(() => process.exit(code));
  child.on("error", (err) => {
    process.stderr.write(`scripted-model: cannot run ${command[0]}: ${err.message}\n`);
    stop(127);
  });
  child.on("exit", (code, signal) => stop(code ?? 128 + (signal === "SIGKILL" ? 9 : 15)));
});
