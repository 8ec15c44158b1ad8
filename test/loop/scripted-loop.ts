// The loop's ports in memory: a scripted model (its replies a list), a journal that is an array and a fold tracker, tools and hooks as plain functions. No process or socket: importing this makes both throw.
import { vi } from "vitest";
import type { StructuredOutput } from "../../src/agent/output-schema.js";
import type { Skill } from "../../src/agent/skills/scan.js";
import { buildContext } from "../../src/context/build.js";
import { contextBudget } from "../../src/context/budget.js";
import type { ContextConfig } from "../../src/context/schema.js";
import type { LlmReply, LlmRequest } from "../../src/conversation.js";
import type { HookOutcome } from "../../src/hooks/run-hook.js";
import type { HookName } from "../../src/hooks/schema.js";
import { JournalEventSchema, type EventOf, type JournalEvent, type NewEvent, type ToolCall } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState } from "../../src/journal/run-state.js";
import { LlmConfigSchema, type LlmConfig } from "../../src/llm/settings-schema.js";
import type { Provider } from "../../src/llm/types.js";
import type { HumanQuestion, InteractionRequest, LoopPorts } from "../../src/loop/ports.js";
import { runLoop, type LoopEnd } from "../../src/loop/run-loop.js";
import { toolCatalogue } from "../../src/loop/tool-catalogue.js";
import { expandTool, type ExpandedTool } from "../../src/tools/expand.js";
import type { InvokeResult } from "../../src/tools/invoke.js";
import { createShownEvents } from "../../src/journal/shown-journal.js";
import { windowFold } from "../../src/journal/window-state.js";
import { inheritedEnv } from "../support/inherited-env.js";

// The loop itself starts nothing and connects nowhere: every process and socket is the ports'.
vi.mock("node:child_process", async (original) => {
  const actual = await original<typeof import("node:child_process")>();
  const refuse = (): never => {
    throw new Error("the loop spawned a process");
  };
  return { ...actual, default: { ...actual, spawn: refuse }, spawn: refuse };
});
vi.mock("node:net", async (original) => {
  const actual = await original<typeof import("node:net")>();
  const refuse = (): never => {
    throw new Error("the loop opened a socket");
  };
  return { ...actual, default: { ...actual, connect: refuse, createConnection: refuse }, connect: refuse, createConnection: refuse };
});

/** One model turn: a reply, an error the call throws, or either made from the request. */
export type Turn = LlmReply | Error | ((request: LlmRequest) => LlmReply | Error);

export function text(content: string, finishReason = "stop"): LlmReply {
  return { content, tool_calls: [], usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: finishReason };
}

export function calls(...toolCalls: [name: string, args: string][]): LlmReply {
  return { content: null, tool_calls: toolCalls.map(([name, args], index) => ({ id: `call_${name}_${index}`, name, arguments: args })), usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: "tool_calls" };
}

/** One hook the loop ran: its point, iteration, payload and hook-specific variables. */
export interface HookCall {
  name: HookName;
  iteration: number;
  payload: unknown;
  env: Record<string, string> | undefined;
}

export interface ScriptedRun {
  ports: LoopPorts;
  journal: JournalEvent[];
  /** Each request the model was sent, in order. */
  requests: LlmRequest[];
  /** The argv of each tool process the loop had run. */
  ran: string[][];
  /** Questions put where a person finds them. */
  published: InteractionRequest[];
  /** The io/tool_executions/ record of each call that ran (or read), in order. */
  executions: Parameters<LoopPorts["records"]["toolExecution"]>[0][];
  /** Every hook point the loop reached, in order (whether or not a hook is configured there). */
  hooked: HookCall[];
  /** engine.log's lines, and the progress lines of stderr. */
  logged: string[];
  progress: string[];
  /** Aborts the run's signal, as SIGINT does. */
  interrupt(): void;
  run(maxIterations?: number): Promise<LoopEnd>;
  /** `delta continue` of the run: the last invocation's end and this one's start journaled, `message` (when given) as the user's, then the loop runs again. */
  continueRun(message?: string, maxIterations?: number): Promise<LoopEnd>;
  of<T extends JournalEvent["type"]>(type: T): Extract<JournalEvent, { type: T }>[];
}

interface Options {
  turns: Turn[];
  /** Events the journal holds before the loop starts (after a USER_MESSAGE with the task). */
  before?: NewEvent[];
  /** Each hook point's outcome (none when not given). */
  hooks?: Partial<Record<HookName, (payload: unknown) => HookOutcome>>;
  /** The tokens the model's window holds. */
  contextWindow?: number;
  /** llm: settings beside the model. */
  llm?: Partial<LlmConfig>;
  /** The agent's exec tools; by default ECHO. */
  tools?: ExpandedTool[];
  /** What a tool process gives back; when it gives nothing, the process succeeds, printing its arguments. */
  toolResult?: (argv: string[]) => InvokeResult | undefined;
  /** Why the box of a tool cannot be made; by default it can. */
  boxFails?: string;
  skills?: Skill[];
  output?: StructuredOutput;
  /** Present: ask_human asks on the terminal (-i) and this answers. */
  askInteractively?: (question: HumanQuestion) => Promise<string>;
  /** The run's budgets; by default every attempt is admitted. */
  budget?: LoopPorts["budget"];
  /** The run's batch port (llm.batch); none by default. */
  batch?: LoopPorts["batch"];
}

/** The agent's one tool by default: `echo ${text}`. */
export const ECHO = expandTool({ name: "echo", exec: "echo ${text}" }, { file: "agent.yaml", path: "tools[0]" });

const CONTEXT: ContextConfig = { sources: [{ type: "journal", id: "conversation_history" }] } as ContextConfig;

export function scriptedRun(options: Options): ScriptedRun {
  const journal: JournalEvent[] = [];
  const tracker = createFoldTracker();
  const state = trackRunState(tracker);
  const window = tracker.register(windowFold);
  // Folded and kept as the run files fold and keep what they read.
  const shown = createShownEvents();
  const requests: LlmRequest[] = [];
  const ran: string[][] = [];
  const published: InteractionRequest[] = [];
  const hooked: HookCall[] = [];
  const executions: ScriptedRun["executions"] = [];
  const logged: string[] = [];
  const progress: string[] = [];
  const turns = [...options.turns];
  const append = <E extends NewEvent>(event: E): EventOf<E["type"]> => {
    const written = JournalEventSchema.parse({ seq: journal.length + 1, timestamp: new Date().toISOString(), ...event });
    journal.push(written);
    tracker.see(written);
    shown.add(written, window().first);
    return written as EventOf<E["type"]>;
  };
  const model: Provider = {
    name: "scripted",
    // As every provider does: nothing is sent that the budget has not admitted, and an admitted attempt is settled.
    complete: async (request, callOptions) => {
      const admission = await callOptions?.admit?.(request);
      requests.push(request);
      const next = turns.shift();
      if (next === undefined) throw new Error(`the script has no reply for request ${requests.length}`);
      const turn = typeof next === "function" ? next(request) : next;
      if (turn instanceof Error) {
        admission?.settle({ failure: { kind: "refused", reason: turn.message } });
        throw turn;
      }
      admission?.settle({ reply: turn });
      return turn;
    },
  };
  const llm = LlmConfigSchema.parse({ model: "scripted-model", ...(options.contextWindow ? { context_window: options.contextWindow } : {}), ...options.llm });
  const budget = contextBudget(llm, CONTEXT);
  const tools = toolCatalogue(options.tools ?? [ECHO], null, options.skills ?? []);
  const controller = new AbortController();
  const signal = controller.signal;
  const ports: LoopPorts = {
    journal: {
      append,
      sync: () => {},
      // As the run's files read it: what was appended since the last read shows from this one on.
      read: () => ({ events: [...shown.events()], window: window(), state: state() }),
      runState: () => state(),
    },
    records: { invocation: () => {}, toolExecution: (record) => executions.push(record) },
    model,
    budget: options.budget ?? { admit: async () => ({ settle: () => null }) },
    batch: options.batch ?? null,
    context: {
      build: (shownJournal, iteration, overflow) => buildContext(CONTEXT, { agentHome: "/agent", cwd: "/work", runId: "run-1", runDir: "/work/.delta/run-1", journalPath: "/work/.delta/run-1/journal.jsonl", baseEnv: inheritedEnv, journal: shownJournal, budget, tools: tools.advertised, iteration, ...(overflow ? { overflow } : {}) }),
    },
    tools,
    processes: {
      prepare: async () => {
        if (options.boxFails !== undefined) throw new Error(options.boxFails);
        return {
          policy: null,
          run: async ({ argv }) => {
            ran.push(argv);
            return { result: options.toolResult?.(argv) ?? succeeded(argv.slice(1).join(" ")), refused: [] };
          },
        };
      },
    },
    hook: async (name, iteration, payload, env) => {
      hooked.push({ name, iteration, payload, env });
      return options.hooks?.[name]?.(payload) ?? { kind: "none" };
    },
    log: { log: (line) => logged.push(line), progress: (line) => progress.push(line), activity: () => {} },
    human: { askInteractively: options.askInteractively, publish: (request) => published.push(request), clear: () => {} },
    settings: {
      runId: "run-1",
      workDir: "/work",
      agentHome: "/agent",
      llm,
      output: options.output,
      budget,
      secrets: [],
      continueCommand: (message) => `delta continue --run-id run-1 -w /work -m '${message}'`,
    },
    signal,
  };
  append({ type: "USER_MESSAGE", content: "the task" });
  for (const event of options.before ?? []) append(event);
  let lastEnd: LoopEnd | undefined;
  const loop = async (maxIterations = 10): Promise<LoopEnd> => (lastEnd = await runLoop(ports, maxIterations));
  return {
    ports,
    journal,
    requests,
    ran,
    published,
    executions,
    hooked,
    logged,
    progress,
    interrupt: () => controller.abort(),
    run: loop,
    continueRun: (message, maxIterations = 10) => {
      // What the run journals when its loop ends, then what the next invocation journals before its loop starts.
      if (lastEnd !== undefined) {
        if ("error" in lastEnd) append({ type: "ERROR", error_type: lastEnd.error.type, error_message: lastEnd.error.message });
        append({ type: "ENGINE_END", run_id: "run-1", status: lastEnd.status, final_iteration: state().iterations });
      }
      append({ type: "ENGINE_START", run_id: "run-1", agent_home: "/agent", work_dir: "/work", config: {}, engine_version: "test" });
      if (message !== undefined) append({ type: "USER_MESSAGE", content: message });
      return loop(maxIterations);
    },
    of: (type) => journal.filter((event) => event.type === type) as never,
  };
}

/** A tool process that exited 0, printing `stdout`. */
export function succeeded(stdout: string): InvokeResult {
  return { exitCode: 0, signal: null, timedOut: false, aborted: false, overLimit: false, outputLeftOpen: false, spawnError: null, durationMs: 1, stdout: `${stdout}\n`, stderr: "", observation: stdout, status: "SUCCESS" };
}

/** A tool process that exited `code`, saying `stderr`. */
export function failed(code: number, stderr: string): InvokeResult {
  return { ...succeeded(""), exitCode: code, stdout: "", stderr: `${stderr}\n`, observation: `[stderr] ${stderr}`, status: "FAILED" };
}

/** The hook points the loop reached, in order. */
export function hookOrder(run: ScriptedRun): HookName[] {
  return run.hooked.map((call) => call.name);
}

/** A THOUGHT of iteration `iteration` asking for `toolCalls`, as a journal before a crash holds it. */
export function thoughtEvent(iteration: number, toolCalls: ToolCall[]): NewEvent {
  return { type: "THOUGHT", iteration, content: null, tool_calls: toolCalls, usage: null, model: "scripted" } as NewEvent;
}
