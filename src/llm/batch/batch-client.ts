// What the engine asks of a provider's batch API, one shape for OpenAI Batch and Anthropic Message Batches: submit, find a lost submission, ask a batch's state, read its results, cancel.

/** One call in a batch: its custom id and the request body the protocol builds (not streamed). */
export interface BatchLine {
  customId: string;
  body: unknown;
}

/** A batch as the provider reports it, in the engine's words. */
export interface BatchState {
  id: string;
  /** The provider's own status word (`in_progress`, `completed`, `ended`…). */
  status: string;
  /** True once no request of it will change: results (if any) can be read. */
  ended: boolean;
  /** Requests by outcome, as the provider counts them. */
  counts: Record<string, number>;
}

/** One call's result in an ended batch. */
export type BatchResult =
  | { kind: "succeeded"; body: unknown }
  | { kind: "failed"; reason: string; httpStatus?: number; serverMessage?: string; serverCode?: string };

/** What finding an earlier submission can say: its batch, none was made, or the provider cannot be asked. */
type FoundSubmission = { batchId: string } | "none" | "unknowable";

export interface BatchClient {
  /** The API's name in messages. */
  readonly name: string;
  /** At most this many calls in one batch, and this many bytes of requests. */
  readonly limits: { requests: number; bytes: number };
  /** The bytes one call takes in the batch's input (its line, or its element). */
  size(line: BatchLine): number;
  /** Creates one batch of `lines`, marked with `submissionId` where the API keeps marks; returns its id. */
  submit(submissionId: string, lines: readonly BatchLine[], signal?: AbortSignal): Promise<string>;
  /** The batch an earlier submission made, looked for among batches created since `since` (epoch ms). */
  find(submissionId: string, since: number, signal?: AbortSignal): Promise<FoundSubmission>;
  state(batchId: string, signal?: AbortSignal): Promise<BatchState>;
  /** The results of an ended batch for the custom ids asked; a custom id the batch has no result for is absent. */
  results(batch: BatchState, wanted: ReadonlySet<string>, signal?: AbortSignal): Promise<Map<string, BatchResult>>;
  cancel(batchId: string, signal?: AbortSignal): Promise<BatchState>;
}

/** The longest line of a results file the engine reads: a reply bounded as a live one is (llm.max_reply_bytes' default). */
export const RESULT_LINE_LIMIT = 64 << 20;
/** The largest results download: far beyond 50,000 or 100,000 bounded replies would need is refused. */
export const RESULTS_LIMIT = 4 * 1024 ** 3;
