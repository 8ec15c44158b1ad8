// The loop's ports in memory: a scripted model (its replies a list), a journal that is an array and a fold tracker, tools and hooks as plain functions. No file, process or socket.
import { buildContext } from "../../src/context/build.js";
import { contextBudget } from "../../src/context/budget.js";
import type { ContextConfig } from "../../src/context/schema.js";
import type { LlmReply, LlmRequest } from "../../src/conversation.js";
import type { HookOutcome } from "../../src/hooks/run-hook.js";
import type { HookName } from "../../src/hooks/schema.js";
import { JournalEventSchema, type EventOf, type JournalEvent, type NewEvent, type ToolCall } from "../../src/journal/events.js";
import { createFoldTracker } from "../../src/journal/fold.js";
import { trackRunState } from "../../src/journal/run-state.js";
import { LlmConfigSchema } from "../../src/llm/settings-schema.js";
import type { Provider } from "../../src/llm/types.js";
import type { InteractionRequest } from "../../src/loop/ports.js";
import type { LoopPorts } from "../../src/loop/ports.js";
import { runLoop, type LoopEnd } from "../../src/loop/run-loop.js";
import { toolCatalogue } from "../../src/loop/tool-catalogue.js";
import { expandTool } from "../../src/tools/expand.js";
import type { InvokeResult } from "../../src/tools/invoke.js";
import { createShownEvents } from "../../src/journal/shown-journal.js";
import { windowFold } from "../../src/journal/window-state.js";

/** One model turn: a reply, or an error the call throws. */
export type Turn = LlmReply | Error;

export function text(content: string, finishReason = "stop"): LlmReply {
  return { content, tool_calls: [], usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: finishReason };
}

export function calls(...toolCalls: [name: string, args: string][]): LlmReply {
  return { content: null, tool_calls: toolCalls.map(([name, args], index) => ({ id: `call_${name}_${index}`, name, arguments: args })), usage: { input_tokens: 10, output_tokens: 2 }, model: "scripted", finish_reason: "tool_calls" };
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
  run(maxIterations?: number): Promise<LoopEnd>;
  of<T extends JournalEvent["type"]>(type: T): Extract<JournalEvent, { type: T }>[];
}

interface Options {
  turns: Turn[];
  /** Events the journal holds before the loop starts (after a USER_MESSAGE with the task). */
  before?: NewEvent[];
  hooks?: Partial<Record<HookName, (payload: unknown) => HookOutcome>>;
  /** The tokens the model's window holds. */
  contextWindow?: number;
}

/** The agent's one tool: `echo ${text}`. */
const ECHO = expandTool({ name: "echo", exec: "echo ${text}" }, { file: "agent.yaml", path: "tools[0]" });

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
    complete: async (request) => {
      requests.push(request);
      const turn = turns.shift();
      if (turn === undefined) throw new Error(`the script has no reply for request ${requests.length}`);
      if (turn instanceof Error) throw turn;
      return turn;
    },
  };
  const llm = LlmConfigSchema.parse({ model: "scripted-model", ...(options.contextWindow ? { context_window: options.contextWindow } : {}) });
  const budget = contextBudget(llm, CONTEXT);
  const tools = toolCatalogue([ECHO], null, []);
  const signal = new AbortController().signal;
  const ports: LoopPorts = {
    journal: {
      append,
      sync: () => {},
      read: () => ({ events: shown.events(), window: window() }),
      runState: () => state(),
    },
    records: { invocation: () => {}, toolExecution: () => {} },
    model,
    context: {
      build: (shownJournal, iteration, overflow) => buildContext(CONTEXT, { agentHome: "/agent", cwd: "/work", runId: "run-1", runDir: "/work/.delta/run-1", journalPath: "/work/.delta/run-1/journal.jsonl", journal: shownJournal, budget, tools: tools.advertised, iteration, ...(overflow ? { overflow } : {}) }),
    },
    tools,
    processes: {
      prepare: async () => ({
        policy: null,
        run: async ({ argv }) => {
          ran.push(argv);
          return { result: succeeded(argv.slice(1).join(" ")), refused: [] };
        },
      }),
    },
    hook: async (name, _iteration, payload) => options.hooks?.[name]?.(payload) ?? { kind: "none" },
    log: { log: () => {}, progress: () => {}, activity: () => {} },
    human: { publish: (request) => published.push(request), clear: () => {} },
    settings: {
      runId: "run-1",
      workDir: "/work",
      agentHome: "/agent",
      llm,
      output: undefined,
      budget,
      secrets: [],
      continueCommand: (message) => `delta continue --run-id run-1 -w /work -m '${message}'`,
    },
    signal,
  };
  append({ type: "USER_MESSAGE", content: "the task" });
  for (const event of options.before ?? []) append(event);
  return {
    ports,
    journal,
    requests,
    ran,
    published,
    run: (maxIterations = 10) => runLoop(ports, maxIterations),
    of: (type) => journal.filter((event) => event.type === type) as never,
  };
}

function succeeded(stdout: string): InvokeResult {
  return { exitCode: 0, signal: null, timedOut: false, aborted: false, overLimit: false, outputLeftOpen: false, spawnError: null, durationMs: 1, stdout: `${stdout}\n`, stderr: "", observation: stdout, status: "SUCCESS" };
}

/** A THOUGHT of iteration `iteration` asking for `toolCalls`, as a journal before a crash holds it. */
export function thoughtEvent(iteration: number, toolCalls: ToolCall[]): NewEvent {
  return { type: "THOUGHT", iteration, content: null, tool_calls: toolCalls, usage: null, model: "scripted" } as NewEvent;
}
