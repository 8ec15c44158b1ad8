// Types of model-server.mjs, so TypeScript tests can import the benchmark's model server.
export interface ModelServer {
  baseUrl: string;
  arrivals(key: string): number[];
  close(): Promise<void>;
}
export interface Step {
  key: string;
  call: number;
  turns: number;
  final: boolean;
}
export function startModelServer(): Promise<ModelServer>;
export function nextStep(messages: ReadonlyArray<{ role: string; content?: string | null }>): Step | null;
