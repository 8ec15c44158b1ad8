// Run inside a box whose network is a host list: listens on 127.0.0.1:<port>, carries each connection to the engine's proxy socket, and runs the command.
// Usage: node sandbox-forwarder.js <socket> <port> -- <argv…>; exits as the command does.
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";

const [socketPath, port, separator, ...command] = process.argv.slice(2);
if (socketPath === undefined || port === undefined || separator !== "--" || command.length === 0) {
  process.stderr.write("usage: sandbox-forwarder <socket> <port> -- <command…>\n");
  process.exit(2);
}

const server = createServer((client) => {
  const upstream = connect(socketPath);
  client.pipe(upstream).pipe(client);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
});
server.on("error", (error) => {
  process.stderr.write(`sandbox-forwarder: cannot listen on 127.0.0.1:${port}: ${error.message}\n`);
  process.exit(126);
});
server.listen(Number(port), "127.0.0.1", () => {
  const child = spawn(command[0]!, command.slice(1), { stdio: "inherit" });
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
