// Types of model-server.mjs for what TypeScript tests import from it.
export interface Step {
  key: string;
  call: number;
  turns: number;
  final: boolean;
}
export function nextStep(messages: ReadonlyArray<{ role: string; content?: string | null }>): Step | null;
export function anthropicMessages(body: object): { role: string; content: string }[];
export function responsesMessages(body: object): { role: string; content: string }[];
export interface ModelServer {
  baseUrl: string;
  arrivals(key: string): number[];
  close(): Promise<void>;
}
export function startModelServer(): Promise<ModelServer>;
