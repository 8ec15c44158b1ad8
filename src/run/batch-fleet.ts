// `delta batch` over workspaces: the runs whose next model call waits in a batch, their queued calls submitted under each run's lease (one batch per endpoint and key), their batches asked or cancelled once each.
import { statSync } from "node:fs";
import { loadAgent } from "../agent/load.js";
import { errorMessage, RunRefusedError } from "../errors.js";
import type { BatchApi, NewEvent } from "../journal/events.js";
import { readRunState, type BatchedCall } from "../journal/run-state.js";
import type { BatchClient, BatchState } from "../llm/batch/batch-client.js";
import { batchClientFor } from "../llm/batch/batch-clients.js";
import { chooseProvider, protocolOf, type ProviderChoice } from "../llm/provider-choice.js";
import { readBatchRequest } from "../store/batch-requests.js";
import { writeHandedResult } from "../store/batch-results.js";
import { takeRun, type RunHold } from "../store/lease/take-run.js";
import { listRuns } from "../store/list-runs.js";
import { openRunFiles, type WritableRunFiles } from "../store/run-files.js";
import { runPaths, type RunPaths } from "../store/run-dir.js";
import { readMetadata } from "../store/run-metadata.js";
import { submitCalls, type DoubtfulCall, type SubmissionReport, type SubmittableCall } from "./batch-submission.js";
import { setupSecrets } from "./engine-start.js";

/** A run of the workspaces whose next model call waits in a batch: queued, being submitted, or submitted. */
export interface WaitingRun {
  runId: string;
  workDir: string;
  paths: RunPaths;
  batched: BatchedCall;
}

interface FleetOptions {
  progress(line: string): void;
  signal?: AbortSignal;
}

/** The DEFERRED MODEL_BATCHED runs of `workDirs` and the call each has waiting. */
export function waitingRuns(workDirs: readonly string[], warn: (line: string) => void): WaitingRun[] {
  const runs: WaitingRun[] = [];
  for (const workDir of workDirs) {
    for (const summary of listRuns(workDir, { status: "DEFERRED" }, warn)) {
      if (summary.deferred?.reason !== "MODEL_BATCHED") continue;
      const paths = runPaths(workDir, summary.run_id);
      try {
        const { batched } = readRunState(paths.journal, { warn });
        if (batched !== null) runs.push({ runId: summary.run_id, workDir, paths, batched });
      } catch (err) {
        warn(`[warning] run ${summary.run_id} in ${workDir}: ${errorMessage(err)}`);
      }
    }
  }
  return runs;
}

/** The endpoint and key a run's calls go to, resolved as `continue` would (its agent's .env files, the environment); cached per agent and workspace. */
function endpointResolver(warn: (line: string) => void): (agentHome: string, workDir: string) => Promise<ProviderChoice> {
  const cache = new Map<string, Promise<ProviderChoice>>();
  return (agentHome, workDir) => {
    const key = `${agentHome}\0${workDir}`;
    let found = cache.get(key);
    if (found === undefined) cache.set(key, (found = loadAgent(agentHome, { warn }).then((agent) => chooseProvider(agent, workDir, { recordedThoughts: 0, warn }))));
    return found;
  };
}

/** A run held by this process for the submission: its writable files and lease. */
interface HeldRun {
  run: WaitingRun;
  files: WritableRunFiles;
  hold: RunHold;
}

/**
 * Submits every queued call of the runs of `workDirs`: each run taken (a run another process holds is left for later),
 * its call read back, grouped with the calls of the same endpoint, key and model, and sent by submitCalls. Every run
 * is released before this returns, its metadata.json made to match the journal it grew.
 */
export async function submitWorkspaces(workDirs: readonly string[], options: FleetOptions & { resubmit: boolean }): Promise<SubmissionReport & { skipped: number }> {
  const warn = (line: string): void => options.progress(line);
  const resolve = endpointResolver(warn);
  const groups = new Map<string, { api: BatchApi; provider: ProviderChoice; fresh: SubmittableCall[]; doubtful: DoubtfulCall[] }>();
  const held: HeldRun[] = [];
  let skipped = 0;
  const total: SubmissionReport = { batches: [], notSent: [] };
  try {
    for (const run of waitingRuns(workDirs, warn)) {
      if (run.batched.submitted?.batch_id) continue;
      let hold: RunHold;
      try {
        hold = await takeRun(run.paths, { runId: run.runId, workDir: run.workDir, force: false });
      } catch (err) {
        if (!(err instanceof RunRefusedError)) throw err;
        skipped += 1;
        warn(`[warning] run ${run.runId}: ${err.message} Its call is left for the next submit.`);
        continue;
      }
      try {
        const readable = openRunFiles(run.paths, { warn });
        // Read again now that the run is ours: another submit may have sent the call meanwhile.
        const batched = readable.state().batched;
        const start = readable.firstEvent();
        if (batched === null || batched.submitted?.batch_id || start?.type !== "ENGINE_START") {
          hold.release();
          continue;
        }
        const provider = await resolve(start.agent_home, start.work_dir);
        const endpoint = provider.describe.endpoint;
        if (provider.access === undefined || endpoint === undefined || endpoint.provider !== batched.queued.provider || endpoint.base_url !== batched.queued.base_url) {
          hold.release();
          skipped += 1;
          warn(`[warning] run ${run.runId}: its call was queued for ${batched.queued.provider} at ${batched.queued.base_url}, but its agent and .env files now name ${endpoint ? `${endpoint.provider} at ${endpoint.base_url}` : "no endpoint"}; not submitted (\`delta continue --live --accept-endpoint\` sends it live)`);
          continue;
        }
        const files = await readable.startWriting({ secrets: setupSecrets({ provider, mcp: null }), owner: hold.lostReason, warn, requestRecords: "parts" });
        held.push({ run, files, hold });
        const body = (await protocolOf(provider.protocol)).body(readBatchRequest(run.paths, batched.queued.custom_id), { stream: false, withoutEcho: false });
        const journal = (event: NewEvent): void => {
          files.journal.append(event);
          files.journal.sync();
        };
        const call: SubmittableCall = { runId: run.runId, iteration: batched.queued.iteration, customId: batched.queued.custom_id, body, journal };
        // One batch per endpoint and key (never one run's call under another's key); OpenAI's input file holds one model.
        const access = provider.access;
        const key = [batched.queued.batch_api, provider.protocol, access.baseUrl, access.apiKey, batched.queued.batch_api === "openai" ? batched.queued.model : ""].join("\0");
        let group = groups.get(key);
        if (group === undefined) groups.set(key, (group = { api: batched.queued.batch_api, provider, fresh: [], doubtful: [] }));
        const submitted = batched.submitted;
        if (submitted === null) group.fresh.push(call);
        else group.doubtful.push({ ...call, submissionId: submitted.submission_id, submittedAt: Date.parse(submitted.timestamp), requests: submitted.requests });
      } catch (err) {
        if (!held.some((entry) => entry.hold === hold)) hold.release();
        throw err;
      }
    }
    for (const group of groups.values()) {
      const client = await batchClientFor(group.api, group.provider.protocol, group.provider.access!, group.provider.secrets);
      const report = await submitCalls(client, group.fresh, group.doubtful, { progress: options.progress, ...(options.signal ? { signal: options.signal } : {}), resubmit: options.resubmit });
      total.batches.push(...report.batches);
      total.notSent.push(...report.notSent);
    }
    return { ...total, skipped };
  } finally {
    for (const { run, files, hold } of held) release(run, files, hold, warn);
  }
}

/** metadata.json's record of the journal's end follows what was appended; then the files are closed and the run let go. */
function release(run: WaitingRun, files: WritableRunFiles, hold: RunHold, warn: (line: string) => void): void {
  try {
    const metadata = readMetadata(run.paths);
    if (metadata.journal_bytes !== undefined) files.writeMetadata({ ...metadata, journal_bytes: statSync(run.paths.journal).size, journal_hash: files.journal.head(), updated_at: new Date().toISOString() });
  } catch (err) {
    warn(`[warning] run ${run.runId}: metadata.json not updated (${errorMessage(err)}); the journal is the run's record`);
  } finally {
    files.close();
    hold.release();
  }
}

/** The batches the runs' calls wait in, each asked once (with the key of the first run that names it). */
export async function askBatches(runs: readonly WaitingRun[], options: FleetOptions & { cancel?: boolean }): Promise<Map<string, { state: BatchState | null; error?: string; runs: WaitingRun[] }>> {
  const warn = (line: string): void => options.progress(line);
  const resolve = endpointResolver(warn);
  const batches = new Map<string, { state: BatchState | null; error?: string; runs: WaitingRun[] }>();
  for (const run of runs) {
    const batchId = run.batched.submitted?.batch_id;
    if (!batchId) continue;
    const known = batches.get(batchId);
    if (known) {
      known.runs.push(run);
      continue;
    }
    const entry: { state: BatchState | null; error?: string; runs: WaitingRun[] } = { state: null, runs: [run] };
    batches.set(batchId, entry);
    try {
      const client = await clientOfRun(run, resolve);
      entry.state = options.cancel ? await client.cancel(batchId, options.signal) : await client.state(batchId, options.signal);
    } catch (err) {
      entry.error = errorMessage(err);
    }
  }
  return batches;
}

/** Calls whose results are read in one download: a batch of 50,000 is read in 25, each keeping only its share. */
const RESULTS_PER_DOWNLOAD = 2_000;

/**
 * The results of the runs' calls in their ended batches, each batch's read once per RESULTS_PER_DOWNLOAD calls, written to
 * `dir` for the runs' own continues (store/batch-results.ts). A batch that cannot be read is a warning: its runs ask themselves.
 */
export async function handResults(batches: ReadonlyMap<string, { state: BatchState | null; runs: WaitingRun[] }>, dir: string, options: FleetOptions): Promise<void> {
  const resolve = endpointResolver((line) => options.progress(line));
  for (const [batchId, { state, runs }] of batches) {
    if (state === null || !state.ended) continue;
    try {
      const client = await clientOfRun(runs[0]!, resolve);
      for (let from = 0; from < runs.length; from += RESULTS_PER_DOWNLOAD) {
        const wanted = new Set(runs.slice(from, from + RESULTS_PER_DOWNLOAD).map((run) => run.batched.queued.custom_id));
        for (const [customId, result] of await client.results(state, wanted, options.signal)) writeHandedResult(dir, batchId, customId, result);
      }
    } catch (err) {
      options.progress(`[warning] the results of batch ${batchId} could not be read (${errorMessage(err)}); each of its runs asks for its own`);
    }
  }
}

async function clientOfRun(run: WaitingRun, resolve: ReturnType<typeof endpointResolver>): Promise<BatchClient> {
  const start = openRunFiles(run.paths, { warn: () => {} }).firstEvent();
  if (start?.type !== "ENGINE_START") throw new Error(`run ${run.runId} has no ENGINE_START`);
  const provider = await resolve(start.agent_home, start.work_dir);
  if (provider.access === undefined) throw new Error(`run ${run.runId}: no endpoint to ask`);
  return batchClientFor(run.batched.queued.batch_api, provider.protocol, provider.access, provider.secrets);
}
