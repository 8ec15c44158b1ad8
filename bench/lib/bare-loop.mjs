// The floor for one turn on this machine: a bare Node loop that calls the model server, runs `echo`, appends a line — no engine, no fsync.
//
// Usage: node bench/lib/bare-loop.mjs <baseUrl> <turns> <key> <file>
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { request } from "node:http";

const [baseUrl, turnsText, key, file] = process.argv.slice(2);
const turns = Number(turnsText);
const messages = [{ role: "user", content: `turns=${turns} key=${key}` }];

for (;;) {
  const reply = await post(`${baseUrl}/chat/completions`, { model: "bench-model", messages });
  const message = reply.choices[0].message;
  messages.push(message);
  appendFileSync(file, `${JSON.stringify(message)}\n`);
  if (!message.tool_calls) break;
  const call = message.tool_calls[0];
  const output = await run("echo", [JSON.parse(call.function.arguments).text]);
  messages.push({ role: "tool", tool_call_id: call.id, content: output });
  appendFileSync(file, `${JSON.stringify({ output })}\n`);
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

function run(file, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"] });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", () => resolve(output));
  });
}
