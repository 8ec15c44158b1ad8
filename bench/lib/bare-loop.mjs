// The floor for one turn on this machine: a bare Node loop that calls the model server, runs `echo`, appends a line — no engine, no fsync.
//
// With --run-files it also does the file work a durable run does each turn (docs/runs.md), and nothing else of an engine:
// journal lines appended to one open file and flushed before the tool runs, the request's new lines appended to
// io/invocations/request-parts.jsonl, each call's record and each tool's record created exclusively as its own file,
// the owner record's heartbeat rewritten in place, and engine.log's lines. What it leaves out (checks, hashes, context,
// retries, ownership) is what the engine's rows pay on top of it.
//
// Usage: node bench/lib/bare-loop.mjs <baseUrl> <turns> <key> <file> [--run-files]
import { spawn } from "node:child_process";
import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";

const [baseUrl, turnsText, key, file, mode] = process.argv.slice(2);
const turns = Number(turnsText);
const messages = [{ role: "user", content: `turns=${turns} key=${key}` }];
const run = mode === "--run-files" ? runFiles(file) : null;

for (let call = 1; ; call += 1) {
  const body = { model: "bench-model", messages };
  const reply = await post(`${baseUrl}/chat/completions`, body);
  const message = reply.choices[0].message;
  run?.called(call, body, reply);
  messages.push(message);
  if (run) run.journal({ type: "THOUGHT", message });
  else appendFileSync(file, `${JSON.stringify(message)}\n`);
  if (!message.tool_calls) break;
  const toolCall = message.tool_calls[0];
  run?.beforeTool(toolCall);
  const output = await runTool("echo", [JSON.parse(toolCall.function.arguments).text], run !== null);
  messages.push({ role: "tool", tool_call_id: toolCall.id, content: output });
  if (run) run.afterTool(call, output);
  else appendFileSync(file, `${JSON.stringify({ output })}\n`);
}
run?.close();

/** A run folder's files at `folder`, written as a durable run writes them each turn. */
function runFiles(folder) {
  mkdirSync(join(folder, "io", "invocations"), { recursive: true });
  mkdirSync(join(folder, "io", "tool_executions"), { recursive: true });
  const journal = openSync(join(folder, "journal.jsonl"), "a", 0o600);
  const log = openSync(join(folder, "engine.log"), "a", 0o600);
  const parts = openSync(join(folder, "io", "invocations", "request-parts.jsonl"), "a", 0o600);
  const owner = openSync(join(folder, "owner.json"), "w", 0o600);
  const line = (fd, value) => writeSync(fd, `${typeof value === "string" ? value : JSON.stringify(value)}\n`);
  const record = (name, value) => {
    const fd = openSync(join(folder, "io", name), "wx", 0o600);
    writeSync(fd, JSON.stringify(value, null, 2));
    closeSync(fd);
  };
  return {
    called(call, body, reply) {
      line(parts, { n: call, message: body.messages.at(-1) });
      record(`invocations/${call}.json`, { iteration: call, request: { model: body.model, messages: body.messages.length }, reply });
      line(log, `${new Date().toISOString()} model call ${call}`);
    },
    journal: (event) => line(journal, event),
    beforeTool(toolCall) {
      line(journal, { type: "ACTION_REQUEST", toolCall });
      fsyncSync(journal);
      writeSync(owner, JSON.stringify({ heartbeat: Date.now() }).padEnd(1024), 0);
    },
    afterTool(call, output) {
      line(log, `${new Date().toISOString()} tool echo ${call}`);
      line(journal, { type: "ACTION_RESULT", output });
      record(`tool_executions/${call}_echo.json`, { iteration: call, argv: ["echo"], stdout: output });
      for (const source of ["system prompt", "DELTA.md", "journal"]) line(log, `${new Date().toISOString()} context ${source}`);
    },
    close() {
      fsyncSync(journal);
      for (const fd of [journal, log, parts, owner]) closeSync(fd);
    },
  };
}

function post(url, body) {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(url, { method: "POST", headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      const chunks = [];
      res.on("data", (chunk) => chunks.push(chunk));
      res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
    });
    req.on("error", reject);
    req.end(text);
  });
}

/** The tool's stdout; its stderr passed through, or read and dropped when `pipeStderr` (a run records both). */
function runTool(command, args, pipeStderr) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", pipeStderr ? "pipe" : "inherit"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.stderr?.resume();
    child.on("error", reject);
    child.on("close", () => resolve(output));
  });
}
