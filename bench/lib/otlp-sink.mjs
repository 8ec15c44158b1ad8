// An OTLP/HTTP trace collector on 127.0.0.1 that accepts every export at once and counts the requests: the cost of live export is then the engine's own.
import { createServer } from "node:http";

export async function startOtlpSink() {
  let requests = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests += 1;
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${server.address().port}`,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
