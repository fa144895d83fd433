// The messages between the coordinator of `plateau engine run --workers N` and its worker
// processes, over Node's IPC channel (V8's serialization, so typed arrays travel as memory).
import type { StopCause } from '../js/runtime.ts';
import type { ExecutionStatus } from '../rest-api.ts';
import type { Progress, RunConfig } from '../runner.ts';
import type { BlockState, GroupState, MetricState, RegistryShape } from './metrics-state.ts';

/** What of `RunConfig` crosses to a worker: the data, not the callbacks. */
export type WorkerRunConfig = Omit<
  RunConfig,
  'logger' | 'stdout' | 'signal' | 'onProgress' | 'restAddress' | 'coordination'
>;

/** How a worker logs: the CLI's --log-output, --verbose and --log-format, as given. */
export interface WorkerLogging {
  output: string | undefined;
  verbose: boolean;
  format: string | undefined;
}

/** A worker's figures every SNAPSHOT_MS: its metrics (trends as changed pages), VUs, progress. */
export interface WorkerSnapshot {
  metrics: MetricState[];
  status: ExecutionStatus;
  vus: number;
  vusMax: number;
  progress: Progress | undefined;
}

/** What a worker hands over when its scenarios have ended, besides its last snapshot. */
export interface WorkerResults {
  rootGroup: GroupState;
  /** `--summary-mode full`'s per-scenario breakdown. */
  breakdown: { name: string; block: BlockState }[] | undefined;
  /** exec.test.fail() was called. */
  failed: boolean;
}

/** The first message to a worker: the test and its share of it. */
export interface WorkerInit {
  kind: 'init';
  /** 0-based; worker 0 runs setup(), and its `loaded` lets the others start. */
  index: number;
  count: number;
  config: WorkerRunConfig;
  logging: WorkerLogging;
}

/** The worker that ends the test: teardown() and the summary, over every worker's results. */
export interface SummaryRole {
  /** Every other worker's whole metrics and results (a dead one's as of its last snapshot). */
  others: { metrics: MetricState[]; results: WorkerResults | undefined }[];
}

/** From the coordinator to a worker. */
export type ToWorker =
  | WorkerInit
  /** Every worker is ready: start the test clock at `atMs` (epoch ms), all at once. */
  | { kind: 'start'; atMs: number }
  /**
   * What worker 0's setup() returned, to every worker (worker 0 too): the scenarios start at
   * `atMs` (epoch ms) in all of them, not as the message happens to arrive in each.
   */
  | { kind: 'setup-data'; data: unknown; atMs: number }
  /** End the run (SIGINT, a threshold with abortOnFail, another worker's abort or death). */
  | { kind: 'stop'; cause: StopCause }
  /** Every worker's scenarios have ended: write the summary (`summary`) or just close. */
  | { kind: 'finish'; summary: SummaryRole | undefined; cause: StopCause | undefined };

/** From a worker to the coordinator. */
export type FromWorker =
  /** The script loaded and its options hold: the registry's shape, for merged thresholds. */
  | { kind: 'loaded'; shape: RegistryShape }
  /** Warmed up, VUs initialized: waiting for `start`. */
  | { kind: 'ready' }
  /** Worker 0's setup() returned (undefined when the script has none). */
  | { kind: 'setup-data'; data: unknown }
  | { kind: 'snapshot'; snapshot: WorkerSnapshot }
  /** This worker's run stopped itself (exec.test.abort(), a signal it got): stop the others. */
  | { kind: 'stopped'; cause: StopCause }
  /** Its scenarios ended: the last snapshot and results; it waits for `finish`. */
  | { kind: 'done'; snapshot: WorkerSnapshot; results: WorkerResults }
  /** Its run's result, sent just before it exits. */
  | { kind: 'result'; exitCode: number; reason: string };

/** How often a worker sends its snapshot, ms: the REST API's and the thresholds' freshness. */
export const SNAPSHOT_MS = 250;
