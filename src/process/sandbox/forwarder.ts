// Run inside a box whose network is a host list: listens on 127.0.0.1:<port>, carries each connection to the engine's proxy over a connection the engine hands in, and runs the command.
// Usage: node sandbox-forwarder.cjs <port> -- <argv…>, started with an IPC channel to the engine; exits as the command does.
import { spawn } from "node:child_process";
import { createServer, Socket } from "node:net";
import { childStdio } from "../child-stdio.js";
import type { OpenAnswer, OpenRequest } from "./proxy-channel.js";

const [port, separator, ...command] = process.argv.slice(2);
if (port === undefined || separator !== "--" || command.length === 0 || process.send === undefined) {
  process.stderr.write("usage: sandbox-forwarder <port> -- <command…> (started by the engine, with its IPC channel)\n");
  process.exit(2);
}
const send = process.send.bind(process);

// The box may create no Unix socket (its seccomp program refuses them): each upstream connection is made by the
// engine and arrives here as a descriptor, answering the request of the same id.
const waiting = new Map<number, Socket>();
let lastId = 0;
process.on("message", (message: OpenAnswer, handle: unknown) => {
  const client = waiting.get(message.id);
  waiting.delete(message.id);
  if (client === undefined || !(handle instanceof Socket)) {
    client?.destroy();
    if (handle instanceof Socket) handle.destroy();
    return;
  }
  handle.on("error", () => client.destroy());
  client.on("error", () => handle.destroy());
  client.pipe(handle).pipe(client);
});

const server = createServer((client) => {
  const id = ++lastId;
  waiting.set(id, client);
  client.on("error", () => client.destroy());
  client.on("close", () => waiting.delete(id));
  send({ open: id } satisfies OpenRequest);
});
server.on("error", (error) => {
  process.stderr.write(`sandbox-forwarder: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(126);
});
server.listen(Number(port), "127.0.0.1", () => {
  // The command gets neither the channel to the engine nor any other descriptor this process inherited.
  const child = spawn(command[0]!, command.slice(1), { stdio: childStdio(["inherit", "inherit", "inherit"]).stdio });
  child.on("error", (error) => {
    process.stderr.write(`${command[0]}: ${error.message}\n`);
    process.exit(127);
  });
  child.on("exit", (code, signal) => {
    server.close();
    if (signal !== null) process.kill(process.pid, signal);
    process.exit(code ?? 1);
  });
});
