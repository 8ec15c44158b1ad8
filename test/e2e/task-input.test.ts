// End to end: where the task comes from (-m, -m -, --message-file, a piped stdin) and which model it goes to (--model, DELTA_MODEL).
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { reply, taskOf, type MockLlm } from "../support/mock-llm.js";
import { delta, modelEnv, readEvents, readMetadataFile, writeAgent, setUpE2e } from "./harness.js";

const { root, serve } = setUpE2e();
let server: MockLlm;


const userMessages = (ws: string, runId: string): string[] =>
  readEvents(ws, runId).flatMap((event) => (event.type === "USER_MESSAGE" ? [event.content] : []));

describe("the task of delta run", () => {
  it("is a piped stdin when no -m is given, without its final newline", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-pipe");
    const ws = join(root, "ws-pipe");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "p1", "--format", "raw"], { env: modelEnv(server.baseUrl), input: "summarize\nthe 'sales' data\n" });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("summarize\nthe 'sales' data");
    expect(userMessages(ws, "p1")).toEqual(["summarize\nthe 'sales' data"]);
    expect(readMetadataFile(ws, "p1")).toMatchObject({ initial_message: "summarize\nthe 'sales' data", task: "summarize\nthe 'sales' data" });
  });

  it("is read from stdin with -m -, not sent as a literal '-'", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-dash");
    const ws = join(root, "ws-dash");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "d1", "-m", "-"], { env: modelEnv(server.baseUrl), input: "from stdin\n" });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("from stdin");
  });

  it("is read from --message-file, and a missing file is refused (126) before anything is created", async () => {
    server = await serve([reply.text("done")]);
    const agent = writeAgent(root, {}, "agent-file");
    const ws = join(root, "ws-file");
    writeFileSync(join(root, "task.md"), "# Task\nCount the words.\n");
    const result = await delta(["run", "--agent", agent, "-w", ws, "--run-id", "f1", "--message-file", join(root, "task.md")], { env: modelEnv(server.baseUrl) });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(taskOf(server.requests[0]!)).toBe("# Task\nCount the words.");

    const missingWs = join(root, "ws-file-missing");
    const missing = await delta(["run", "--agent", agent, "-w", missingWs, "--message-file", join(root, "nope.md"), "--format", "json"], { env: modelEnv(server.baseUrl) });
    expect(missing.exitCode).toBe(126);
    expect(JSON.parse(missing.stdout).error).toMatchObject({ type: "USAGE_ERROR", message: expect.stringContaining(`--message-file ${join(root, "nope.md")}: no such file`) });
    expect(existsSync(missingWs)).toBe(false);
  });

  it("is refused (126) when stdin is empty and no -m is given", async () => {
    server = await serve([]);
    const agent = writeAgent(root, {}, "agent-empty");
    const result = await delta(["run", "--agent", agent, "-y"], { env: modelEnv(server.baseUrl), input: "" });
    expect(result.exitCode).toBe(126);
    expect(result.stderr).toContain("is empty");
    expect(existsSync(join(agent, "workspaces"))).toBe(false);
    expect(server.requests).toHaveLength(0);
  });
});

describe("the message of delta continue", () => {
  it("never comes from stdin unasked (continue runs inside `while read` loops), and comes from it with -m -", async () => {
    server = await serve([reply.text("first"), reply.text("second"), reply.text("third")]);
    const agent = writeAgent(root, {}, "agent-cont");
    const ws = join(root, "ws-cont");
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "c1", "-m", "start"], { env: modelEnv(server.baseUrl) });

    // COMPLETED needs a message: stdin must not silently become one.
    const unasked = await delta(["continue", "--run-id", "c1", "-w", ws], { env: modelEnv(server.baseUrl), input: "the next line of a while-read loop\n" });
    expect(unasked.exitCode).toBe(126);
    expect(userMessages(ws, "c1")).toEqual(["start"]);

    const asked = await delta(["continue", "--run-id", "c1", "-w", ws, "-m", "-", "--format", "raw"], { env: modelEnv(server.baseUrl), input: "go on\n" });
    expect(asked.exitCode, asked.stderr).toBe(0);
    expect(userMessages(ws, "c1")).toEqual(["start", "go on"]);

    writeFileSync(join(root, "next.txt"), "and finish\n");
    const fromFile = await delta(["continue", "--run-id", "c1", "-w", ws, "--message-file", join(root, "next.txt")], { env: modelEnv(server.baseUrl) });
    expect(fromFile.exitCode, fromFile.stderr).toBe(0);
    expect(userMessages(ws, "c1")).toEqual(["start", "go on", "and finish"]);
  });
});

describe("the model of an invocation", () => {
  it("is --model over DELTA_MODEL over llm.model, sent to the server and recorded in ENGINE_START and metadata.json", async () => {
    server = await serve([reply.text("a"), reply.text("b"), reply.text("c")]);
    const agent = writeAgent(root, {}, "agent-model");
    const ws = join(root, "ws-model");
    const env = modelEnv(server.baseUrl, { DELTA_MODEL: "env-model" });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "m1", "-m", "x", "--model", "flag-model"], { env });
    await delta(["run", "--agent", agent, "-w", ws, "--run-id", "m2", "-m", "x"], { env });
    await delta(["continue", "--run-id", "m1", "-w", ws, "-m", "y"], { env: modelEnv(server.baseUrl) });
    const models = server.requests.map((request) => (request.body as { model: string }).model);
    expect(models).toEqual(["flag-model", "env-model", "mock-model"]);

    const starts = readEvents(ws, "m1").flatMap((event) => (event.type === "ENGINE_START" ? [event.config.model] : []));
    expect(starts).toEqual(["flag-model", "mock-model"]);
    expect(readEvents(ws, "m2")[0]).toMatchObject({ type: "ENGINE_START", config: { model: "env-model" } });
    expect(readMetadataFile(ws, "m2").model).toBe("env-model");
    expect(readMetadataFile(ws, "m1").model).toBe("mock-model");
    expect(readdirSync(join(ws, ".delta")).sort()).toEqual(["VERSION", "m1", "m2"]);
  });
});
