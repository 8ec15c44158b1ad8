// A scripted model server on 127.0.0.1 that stands in for the model in tests: OpenAI Chat Completions, Anthropic Messages or OpenAI Responses.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { requestViolations } from "./request-invariants.js";

export interface ScriptedToolCall {
  name: string;
  /** An object is sent JSON-encoded; a string is sent exactly as given (it may be invalid JSON on purpose). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface ReplyOptions {
  model?: string;
  finishReason?: string;
  /** Chat Completions usage; `prompt_tokens_details` passes through as a server would send it. */
  usage?: { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens: number } };
}

export type Step =
  | { kind: "reply"; content: string | null; toolCalls: ScriptedToolCall[]; options: ReplyOptions }
  | { kind: "raw"; status: number; body: string | Buffer | object; headers: Record<string, string> }
  | { kind: "chunks"; status: number; headers: Record<string, string>; chunks: { afterMs: number; data: string | Buffer }[] }
  | { kind: "status"; status: number; message: string; headers: Record<string, string> }
  | { kind: "reset" }
  | { kind: "hang" }
  | { kind: "invalidJson" }
  | { kind: "noChoices" }
  | { kind: "delayed"; ms: number; then: Step };

export interface RecordedRequest {
  method: string;
  path: string;
  /** The request target as sent, query included. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, or the raw text when it was not JSON. */
  body: unknown;
  /** Position in the script that answered it; null when the script had run out or the path was wrong. */
  stepIndex: number | null;
  at: number;
}

export type Script = Step[] | ((request: RecordedRequest, index: number) => Step);

/** One chat message of a recorded request, as far as tests look at it. */
export interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string }[];
}

/** The messages of a recorded model request; none when the body had no messages. */
export function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body as { messages?: WireMessage[] }).messages ?? [];
}

/** The first user message of a recorded model request: the run's task. */
export function taskOf(request: RecordedRequest): string {
  return messagesOf(request).find((m) => m.role === "user")?.content ?? "";
}

/** The tool results the model has seen so far in this request. */
export function toolResultsOf(request: RecordedRequest): string[] {
  return messagesOf(request).filter((m) => m.role === "tool").map((m) => m.content ?? "");
}

export interface MockLlm {
  /** e.g. "http://127.0.0.1:43121/v1" — what DELTA_BASE_URL should be. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Steps not yet consumed (always 0 for a function script). */
  remaining(): number;
  /** TCP connections clients opened to this server so far. */
  connections(): number;
  /** Every broken protocol rule (request-invariants.ts) of the requests so far, each refused with 400 without using a step. */
  readonly violations: string[];
  push(...steps: Step[]): void;
  close(): Promise<void>;
}

export const reply = {
  text(content: string, options: ReplyOptions = {}): Step {
    return { kind: "reply", content, toolCalls: [], options };
  },
  toolCalls(calls: ScriptedToolCall[], content: string | null = null, options: ReplyOptions = {}): Step {
    return { kind: "reply", content, toolCalls: calls, options };
  },
  /** Exactly these bytes (a Buffer or a string) or this object as JSON, with this status; `content-type` defaults to application/json. */
  raw(status: number, body: string | Buffer | object, headers: Record<string, string> = {}): Step {
    return { kind: "raw", status, body, headers };
  },
  /** A body sent in pieces, each after a pause: a stream that thinks aloud, or stalls. */
  chunks(status: number, headers: Record<string, string>, chunks: { afterMs: number; data: string | Buffer }[]): Step {
    return { kind: "chunks", status, headers, chunks };
  },
};

export const fault = {
  /** An error status with an OpenAI-style error body; retryAfter sets `Retry-After`, retryAfterMs `retry-after-ms`. */
  status(status: number, options: { retryAfter?: string; retryAfterMs?: number; message?: string } = {}): Step {
    const headers: Record<string, string> = {};
    if (options.retryAfter !== undefined) headers["retry-after"] = options.retryAfter;
    if (options.retryAfterMs !== undefined) headers["retry-after-ms"] = String(options.retryAfterMs);
    return { kind: "status", status, message: options.message ?? `mock error ${status}`, headers };
  },
  /** Sends the headers and half the body, then destroys the socket. */
  reset(): Step {
    return { kind: "reset" };
  },
  /** Never answers; the connection is closed by server.close(). */
  hang(): Step {
    return { kind: "hang" };
  },
  invalidJson(): Step {
    return { kind: "invalidJson" };
  },
  noChoices(): Step {
    return { kind: "noChoices" };
  },
  /** Answers with `then` only after `ms` milliseconds, so a client can be killed while it waits for the model. */
  delay(ms: number, then: Step): Step {
    return { kind: "delayed", ms, then };
  },
};

/** The wire protocol the server speaks: where it answers, and the shape of its scripted replies. */
export type Protocol = "chat-completions" | "anthropic" | "openai-responses";

const PATHS: Record<Protocol, Set<string>> = {
  "chat-completions": new Set(["/v1/chat/completions", "/chat/completions"]),
  anthropic: new Set(["/v1/messages"]),
  "openai-responses": new Set(["/v1/responses", "/responses"]),
};

export interface MockLlmOptions {
  /** Serve HTTPS with this key and certificate instead of plain HTTP. */
  tls?: { key: string; cert: string };
  /** Default chat-completions. */
  protocol?: Protocol;
}

export async function startMockLlm(script: Script = [], options: MockLlmOptions = {}): Promise<MockLlm> {
  const queue: Step[] = Array.isArray(script) ? [...script] : [];
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const sockets = new Set<Socket>();
  let answered = 0;
  let connections = 0;
  const protocol = options.protocol ?? "chat-completions";

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path,
        url: req.url ?? "/",
        headers: req.headers,
        body: parseJsonOr(text),
        stepIndex: null,
        at: Date.now(),
      };
      requests.push(recorded);
      if (req.method !== "POST" || !PATHS[protocol].has(path)) {
        sendJson(res, 404, errorBody(`mock LLM: no route for ${req.method} ${path}; use POST ${[...PATHS[protocol]][0]}`));
        return;
      }
      // Every request the engine sends is checked: one that breaks its protocol is refused as a real server would refuse it.
      const problems = requestViolations(protocol, recorded.body);
      if (problems.length > 0) {
        violations.push(...problems.map((problem) => `request ${requests.length}: ${problem}`));
        sendJson(res, 400, invalidRequestBody(protocol, `mock LLM: the request breaks the protocol: ${problems.join("; ")}`));
        return;
      }
      const step = nextStep(recorded);
      if (!step) {
        sendJson(res, 500, errorBody(`mock LLM: script exhausted after ${answered} replies; request ${requests.length} was not expected`));
        return;
      }
      recorded.stepIndex = answered;
      answered += 1;
      answer(res, step, recorded, answered, protocol);
    });
  };
  const server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);
  server.on("connection", (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  function nextStep(recorded: RecordedRequest): Step | undefined {
    if (typeof script === "function") return script(recorded, answered);
    return queue.shift();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `${options.tls ? "https" : "http"}://127.0.0.1:${port}/v1`,
    requests,
    violations,
    remaining: () => queue.length,
    connections: () => connections,
    push: (...steps) => {
      queue.push(...steps);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function answer(res: ServerResponse, step: Step, request: RecordedRequest, ordinal: number, protocol: Protocol): void {
  switch (step.kind) {
    case "reply":
      sendJson(res, 200, REPLIES[protocol](step, request, ordinal));
      return;
    case "raw": {
      const body = typeof step.body === "string" || Buffer.isBuffer(step.body) ? step.body : JSON.stringify(step.body);
      res.writeHead(step.status, { "content-type": "application/json", ...step.headers });
      res.end(body);
      return;
    }
    case "chunks": {
      res.writeHead(step.status, step.headers);
      const send = (index: number): void => {
        const chunk = step.chunks[index];
        if (!chunk) {
          res.end();
          return;
        }
        setTimeout(() => {
          if (res.destroyed) return;
          res.write(chunk.data);
          send(index + 1);
        }, chunk.afterMs).unref();
      };
      send(0);
      return;
    }
    case "status":
      sendJson(res, step.status, errorBody(step.message), step.headers);
      return;
    case "reset": {
      const body = JSON.stringify(completion({ kind: "reply", content: "this reply is cut short", toolCalls: [], options: {} }, request, ordinal));
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      res.write(body.slice(0, Math.floor(body.length / 2)), () => res.socket?.destroy());
      return;
    }
    case "hang":
      return;
    case "invalidJson":
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"id": "chatcmpl-broken", "choices": [');
      return;
    case "noChoices":
      sendJson(res, 200, { id: `chatcmpl-mock-${ordinal}`, object: "chat.completion", created: 1_700_000_000, model: modelOf(request), choices: [] });
      return;
    case "delayed":
      setTimeout(() => {
        if (!res.destroyed) answer(res, step.then, request, ordinal, protocol);
      }, step.ms).unref();
      return;
  }
}

type ReplyStep = Extract<Step, { kind: "reply" }>;

function completion(step: ReplyStep, request: RecordedRequest, ordinal: number): object {
  const toolCalls = step.toolCalls.map((call, index) => ({
    id: call.id ?? `call_${ordinal}_${index + 1}`,
    type: "function",
    function: { name: call.name, arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments) },
  }));
  const message = { role: "assistant", content: step.content, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) };
  const usage = step.options.usage ?? derivedUsage(request, message);
  return {
    id: `chatcmpl-mock-${ordinal}`,
    object: "chat.completion",
    created: 1_700_000_000 + ordinal,
    model: step.options.model ?? modelOf(request),
    choices: [{ index: 0, message, finish_reason: step.options.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop") }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}

/** The same reply in Anthropic Messages shape. */
function anthropicMessage(step: ReplyStep, request: RecordedRequest, ordinal: number): object {
  const content = [
    ...(step.content === null ? [] : [{ type: "text", text: step.content }]),
    ...step.toolCalls.map((call, index) => ({ type: "tool_use", id: call.id ?? `toolu_${ordinal}_${index + 1}`, name: call.name, input: typeof call.arguments === "string" ? JSON.parse(call.arguments) : call.arguments })),
  ];
  const usage = step.options.usage ?? derivedUsage(request, content);
  return {
    id: `msg_mock_${ordinal}`,
    type: "message",
    role: "assistant",
    model: step.options.model ?? modelOf(request),
    content,
    stop_reason: step.options.finishReason ?? (step.toolCalls.length > 0 ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: { input_tokens: usage.prompt_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: usage.completion_tokens },
  };
}

/** The same reply in OpenAI Responses shape. */
function responsesResponse(step: ReplyStep, request: RecordedRequest, ordinal: number): object {
  const output = [
    ...(step.content === null ? [] : [{ id: `msg_mock_${ordinal}`, type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", annotations: [], text: step.content }] }]),
    ...step.toolCalls.map((call, index) => ({
      id: `fc_mock_${ordinal}_${index + 1}`,
      type: "function_call",
      status: "completed",
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
      call_id: call.id ?? `call_${ordinal}_${index + 1}`,
      name: call.name,
    })),
  ];
  const usage = step.options.usage ?? derivedUsage(request, output);
  const incomplete = step.options.finishReason === "max_output_tokens";
  return {
    id: `resp_mock_${ordinal}`,
    object: "response",
    status: incomplete ? "incomplete" : "completed",
    incomplete_details: incomplete ? { reason: "max_output_tokens" } : null,
    error: null,
    model: step.options.model ?? modelOf(request),
    output,
    usage: {
      input_tokens: usage.prompt_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.completion_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
    },
  };
}

const REPLIES: Record<Protocol, (step: ReplyStep, request: RecordedRequest, ordinal: number) => object> = {
  "chat-completions": completion,
  anthropic: anthropicMessage,
  "openai-responses": responsesResponse,
};

/** Deterministic counts (about four characters a token) so tests can predict them. */
function derivedUsage(request: RecordedRequest, message: object): { prompt_tokens: number; completion_tokens: number } {
  const messages = isRecord(request.body) ? (request.body.messages ?? request.body.input) : undefined;
  return {
    prompt_tokens: Math.ceil(JSON.stringify(messages ?? []).length / 4),
    completion_tokens: Math.max(1, Math.ceil(JSON.stringify(message).length / 4)),
  };
}

function modelOf(request: RecordedRequest): string {
  return isRecord(request.body) && typeof request.body.model === "string" ? request.body.model : "mock-model";
}

/** A 400's body as the protocol's server writes it. */
function invalidRequestBody(protocol: Protocol, message: string): object {
  return protocol === "anthropic" ? { type: "error", error: { type: "invalid_request_error", message } } : { error: { message, type: "invalid_request_error", code: null } };
}

function errorBody(message: string): object {
  return { error: { message, type: "mock_error", code: null } };
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function parseJsonOr(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
