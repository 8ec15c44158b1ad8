// When two model requests are equal: the same after normalizing what differs on every run (run ids, workspace and agent paths, call ids, timestamps), compared part by part.
//
// The one comparison of `delta diff`, `--replay --until-divergence` / `--replay-strict`, and `delta fork`'s check of
// the requests it copied. The rules are listed in docs/runs.md (Branching and comparing runs); each is a function here.
import type { ChatMessage, FunctionTool, LlmRequest } from "../conversation.js";
import { counted } from "../plural.js";
import { redactSecrets } from "../secrets.js";

/** What differs on every run, on one side of a comparison. */
export interface RunFacts {
  /** The run's id, and a fork's source's (its io records were the source's requests). */
  runIds: readonly string[];
  /** The workspace and the agent's folder, as the run journaled them. */
  workDir: string;
  agentHome: string;
  /** Strings the run keeps out of its files: a live request is compared as its record would hold it. */
  secrets?: readonly string[];
}

/** The parts of a request, in the order a difference is looked for and told. */
const REQUEST_PARTS = ["model", "parameters", "system prompt", "tools", "messages"] as const;
type RequestPart = (typeof REQUEST_PARTS)[number];

/** One part that differs: what changed in a line, and the part on each side as text (normalized), for a diff of it. */
export interface PartDifference {
  part: RequestPart;
  summary: string;
  a: string;
  b: string;
}

interface ComparedRequest {
  request: LlmRequest;
  facts: RunFacts;
}

/** The parts in which `a` and `b` differ once normalized, in REQUEST_PARTS order; none when the requests are equal. */
export function compareRequests(a: ComparedRequest, b: ComparedRequest): PartDifference[] {
  const both = [a.facts, b.facts];
  const left = normalizeRequest(a.request, a.facts, both);
  const right = normalizeRequest(b.request, b.facts, both);
  return [compareModel(left, right), compareParameters(left, right), compareSystem(left, right), compareTools(left, right), compareMessages(left, right)].filter(
    (difference): difference is PartDifference => difference !== null,
  );
}

export function requestsEqual(a: ComparedRequest, b: ComparedRequest): boolean {
  return compareRequests(a, b).length === 0;
}

const RUN_ID_PLACEHOLDER = "<run-id>";
const WORKSPACE_PLACEHOLDER = "<workspace>";
const AGENT_PLACEHOLDER = "<agent>";
const TIMESTAMP_PLACEHOLDER = "<timestamp>";

/**
 * The request as compared: redacted as its record would be (with its run's secrets), each tool call id replaced by
 * `<call-N>` in the order the request first names it, and in every string the run ids, the workspace and agent paths of
 * every run in `compared` (both sides of a comparison: a word that is one run's id is replaced in the other's text too,
 * so equal texts stay equal), those call ids and timestamps replaced by placeholders.
 */
export function normalizeRequest(request: LlmRequest, facts: RunFacts, compared: readonly RunFacts[] = [facts]): LlmRequest {
  const redacted = redactSecrets(request, facts.secrets ?? []) as LlmRequest;
  const callIds = callIdsOf(redacted.messages);
  const text = textNormalizer(compared, callIds);
  const visit = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(visit);
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, visit(field)]));
    return value;
  };
  return visit(redacted) as LlmRequest;
}

/** A text of a run (a tool call's arguments, an answer) with the ids and paths of the runs compared and timestamps replaced as in a request. */
export function normalizeText(text: string, compared: readonly RunFacts[]): string {
  return textNormalizer(compared, new Map())(text);
}

/** Each tool call id of the messages, in the order they first name it, with its placeholder. */
function callIdsOf(messages: readonly ChatMessage[]): Map<string, string> {
  const ids = new Map<string, string>();
  const note = (id: string): void => {
    if (!ids.has(id)) ids.set(id, `<call-${ids.size + 1}>`);
  };
  for (const message of messages) {
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) note(call.id);
    if (message.role === "tool") note(message.tool_call_id);
  }
  return ids;
}

/** Characters a run id or a call id is made of: such an id is replaced only where it stands as a word of its own. */
const ID_CHARACTERS = "A-Za-z0-9._-";
const ISO_TIMESTAMP = String.raw`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`;
/** The engine's own form in io/ file names: 20251013T143522123Z. */
const COMPACT_TIMESTAMP = String.raw`\d{8}T\d{6}(?:\d{3})?Z`;

/**
 * One pass over a string: the run's paths (the longer first, so a workspace inside the agent's folder is the
 * workspace) wherever they are not followed by more of a file name; ids where they stand alone; timestamps.
 */
function textNormalizer(compared: readonly RunFacts[], callIds: ReadonlyMap<string, string>): (text: string) => string {
  const replacements = new Map<string, string>();
  for (const facts of compared) {
    for (const [path, placeholder] of [
      [facts.workDir, WORKSPACE_PLACEHOLDER],
      [facts.agentHome, AGENT_PLACEHOLDER],
    ] as const) {
      if (path.length > 1 && !replacements.has(path)) replacements.set(path, placeholder);
    }
  }
  const ids = new Map<string, string>();
  for (const [id, placeholder] of callIds) if (replaceableId(id)) ids.set(id, placeholder);
  for (const facts of compared) for (const id of facts.runIds) if (replaceableId(id) && !ids.has(id)) ids.set(id, RUN_ID_PLACEHOLDER);
  const alternatives = [
    ...[...replacements.keys()].sort(longestFirst).map((path) => `${escape(path)}(?![${ID_CHARACTERS}])`),
    ...[...ids.keys()].sort(longestFirst).map((id) => `(?<![${ID_CHARACTERS}])${escape(id)}(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])`),
    `(?<![0-9])(?:${ISO_TIMESTAMP}|${COMPACT_TIMESTAMP})(?![0-9])`,
  ];
  const pattern = new RegExp(alternatives.join("|"), "g");
  return (text) => text.replace(pattern, (found) => replacements.get(found) ?? ids.get(found) ?? TIMESTAMP_PLACEHOLDER);
}

/** Ids of fewer than four characters, or of digits only, would stand for words and numbers of the text too: they are left. */
function replaceableId(id: string): boolean {
  return id.length >= 4 && !/^[0-9]+$/.test(id);
}

function longestFirst(a: string, b: string): number {
  return b.length - a.length;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

function compareModel(a: LlmRequest, b: LlmRequest): PartDifference | null {
  return a.model === b.model ? null : { part: "model", summary: `the model changed: ${a.model} → ${b.model}`, a: a.model, b: b.model };
}

/** The sampling parameters and the structured-output schema, as sent. */
function compareParameters(a: LlmRequest, b: LlmRequest): PartDifference | null {
  const left = parametersOf(a);
  const right = parametersOf(b);
  const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])].sort();
  const changed = keys.filter((key) => canonicalJson(left[key]) !== canonicalJson(right[key]));
  if (changed.length === 0) return null;
  return { part: "parameters", summary: `parameters changed: ${changed.join(", ")}`, a: prettyJson(left), b: prettyJson(right) };
}

function parametersOf(request: LlmRequest): Record<string, unknown> {
  return { ...request.params, ...(request.output_format ? { output_format: request.output_format } : {}) };
}

/** The system prompt: the system messages the request starts with. */
function compareSystem(a: LlmRequest, b: LlmRequest): PartDifference | null {
  const left = systemPromptOf(a.messages);
  const right = systemPromptOf(b.messages);
  if (left.join("\n") === right.join("\n") && left.length === right.length) return null;
  return { part: "system prompt", summary: "the system prompt changed", a: left.join("\n\n"), b: right.join("\n\n") };
}

function systemPromptOf(messages: readonly ChatMessage[]): string[] {
  const texts: string[] = [];
  for (const message of messages) {
    if (message.role !== "system") break;
    texts.push(message.content);
  }
  return texts;
}

/** The tool list: which tools came or went, which changed (description or parameters), or only their order. */
function compareTools(a: LlmRequest, b: LlmRequest): PartDifference | null {
  if (canonicalJson(a.tools) === canonicalJson(b.tools)) return null;
  const left = new Map(a.tools.map((tool) => [tool.function.name, tool]));
  const right = new Map(b.tools.map((tool) => [tool.function.name, tool]));
  const added = [...right.keys()].filter((name) => !left.has(name));
  const removed = [...left.keys()].filter((name) => !right.has(name));
  const changed = [...left.keys()].filter((name) => right.has(name) && canonicalJson(left.get(name)) !== canonicalJson(right.get(name)));
  const said = [
    ...(added.length > 0 ? [`added ${added.join(", ")}`] : []),
    ...(removed.length > 0 ? [`removed ${removed.join(", ")}`] : []),
    ...changed.map((name) => `${name}: ${toolChange(left.get(name)!, right.get(name)!)}`),
  ];
  return { part: "tools", summary: `tools changed: ${said.length > 0 ? said.join("; ") : "their order"}`, a: toolsText(a.tools), b: toolsText(b.tools) };
}

function toolChange(a: FunctionTool, b: FunctionTool): string {
  const what = [
    ...(a.function.description !== b.function.description ? ["description"] : []),
    ...(canonicalJson(a.function.parameters) !== canonicalJson(b.function.parameters) ? ["parameters"] : []),
  ];
  return `${what.length > 0 ? what.join(" and ") : "definition"} changed`;
}

function toolsText(tools: readonly FunctionTool[]): string {
  return tools.map((tool) => `${tool.function.name}: ${tool.function.description}\n  parameters: ${canonicalJson(tool.function.parameters)}`).join("\n");
}

/** The conversation after the system prompt: the first message that differs, or the one only one side has (numbered as in the request, from 1). */
function compareMessages(a: LlmRequest, b: LlmRequest): PartDifference | null {
  const from = Math.min(systemPromptOf(a.messages).length, systemPromptOf(b.messages).length);
  const length = Math.max(a.messages.length, b.messages.length);
  for (let index = from; index < length; index += 1) {
    const l = a.messages[index];
    const r = b.messages[index];
    if (l !== undefined && r !== undefined && canonicalJson(l) === canonicalJson(r)) continue;
    const position = index + 1;
    const counts = `${counted(a.messages.length, "message")} before, ${b.messages.length} now`;
    const summary =
      l === undefined
        ? `message ${position} (${r!.role}) is new: ${counts}`
        : r === undefined
          ? `message ${position} (${l.role}) is gone: ${counts}`
          : `message ${position} (${l.role === r.role ? l.role : `${l.role} → ${r.role}`}) changed${messageChange(l, r)}`;
    return { part: "messages", summary, a: l === undefined ? "" : messageText(l), b: r === undefined ? "" : messageText(r) };
  }
  return null;
}

function messageChange(a: ChatMessage, b: ChatMessage): string {
  if (a.role !== "assistant" || b.role !== "assistant") return "";
  return canonicalJson(a.tool_calls ?? []) !== canonicalJson(b.tool_calls ?? []) ? ": its tool calls" : "";
}

/** A message as a person reads it: its role, its text, and an assistant's tool calls one a line. */
function messageText(message: ChatMessage): string {
  const lines = [`[${message.role}${message.role === "tool" ? ` ${message.tool_call_id}` : ""}]`];
  if (message.content !== null) lines.push(message.content);
  if (message.role === "assistant") {
    for (const call of message.tool_calls ?? []) lines.push(`→ ${call.name} ${call.arguments}  (${call.id})`);
    if (message.reasoning !== undefined) lines.push(`(reasoning) ${message.reasoning}`);
    if (message.provider_data !== undefined) lines.push(`(provider data) ${canonicalJson(message.provider_data)}`);
  }
  return lines.join("\n");
}

/** JSON with each object's keys sorted: two values written in different key orders compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value)) ?? "undefined";
}

function prettyJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value), null, 2);
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortedKeys((value as Record<string, unknown>)[key])]),
  );
}
