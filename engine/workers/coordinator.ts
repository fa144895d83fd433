// `plateau engine run --workers N`: one engine process per core on execution segments,
// presented as one test. The coordinator runs no VU: it starts the workers, starts their
// clocks together, merges their metrics (thresholds, abortOnFail, the REST API, the progress
// line), chooses the worker that ends the test, and joins their outputs into one file each.

import { EXIT_CODES } from '../../contract/index.ts';
import { describe } from '../js/loader.ts';
import type { Logger } from '../js/logger.ts';
import type { StopCause } from '../js/runtime.ts';
import { MetricRegistry } from '../metrics/registry.ts';
import { evaluateThresholds, type ThresholdVerdict } from '../metrics/threshold-evaluator.ts';
import {
  EXECUTION_STATUS,
  type RestAddress,
  type RestApi,
  type RestApiSource,
  startRestApi,
} from '../rest-api.ts';
import { outputFileName, type Progress, type RunResult } from '../runner.ts';
import { MergedRun } from './merged-run.ts';
import { joinOutputParts } from './output-parts.ts';
import { decideEnding } from './test-ending.ts';
import { partPath, workerSegments } from './worker-plan.ts';
import { type WorkerCommand, WorkerProcess } from './worker-process.ts';
import type { FromWorker, WorkerLogging, WorkerRunConfig } from './worker-protocol.ts';

/** How often the merged thresholds are evaluated (k6: every 2 s), ms. */
const THRESHOLD_INTERVAL_MS = 2000;
/**
 * How long after the last worker is ready their clocks start, and after setup() their
 * scenarios: time for the message to reach every worker, ms.
 */
const START_DELAY_MS = 50;

/** A test to run on workers. */
export interface WorkersConfig {
  /** The test, as one process would run it; each worker gets its segment and its share of the outputs. */
  run: WorkerRunConfig;
  workers: number;
  logging: WorkerLogging;
  command: WorkerCommand;
  logger: Logger;
  /** The REST API, served by the coordinator from every worker's metrics (none in the workers). */
  restAddress?: RestAddress;
  /** Aborting it stops every worker, as SIGINT does one process (105, data kept). */
  signal?: AbortSignal;
  /** Called every second while the clock runs, with the workers' progress merged. */
  onProgress?: (progress: Progress) => void;
}

/**
 * Runs `config.run` on `config.workers` engine processes as one test and returns its
 * result: one exit code (test-ending.ts), one output file per --out (output-parts.ts), the
 * summary written by one worker from everyone's metrics. Never throws for the test's own
 * problems: they are exit codes, as with runTest.
 */
export async function runWithWorkers(config: WorkersConfig): Promise<RunResult> {
  return new Coordinator(config).run();
}

class Coordinator {
  readonly #config: WorkersConfig;
  readonly #segments: ReturnType<typeof workerSegments>;
  readonly #workers: WorkerProcess[] = [];
  readonly #startedMs = Date.now();
  #merged: MergedRun | undefined;
  #stopCause: StopCause | undefined;
  /** When the workers' clocks started, epoch ms. */
  #clockMs: number | undefined;
  #judged: MetricRegistry | undefined;
  #verdict: ThresholdVerdict | undefined;
  readonly #empty = new MetricRegistry();
  #wake: (() => void) | undefined;
  /** The worker that ends the test (teardown, thresholds, summary), once chosen. */
  #summaryIndex: number | undefined;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(config: WorkersConfig) {
    this.#config = config;
    this.#segments = workerSegments(config.workers);
  }

  async run(): Promise<RunResult> {
    const config = this.#config;
    const result = (exitCode: number, reason: string): RunResult => ({
      exitCode,
      reason,
      summary: undefined,
      durationMs: Date.now() - this.#startedMs,
    });
    let restApi: RestApi | undefined;
    if (config.restAddress) {
      try {
        restApi = await startRestApi(config.restAddress, this.#restSource());
      } catch (error) {
        const { host, port } = config.restAddress;
        const message = `the REST API cannot listen on ${host}:${port}: ${describe(error)}`;
        config.logger.log(
          'error',
          `${message}\nchoose another --address (a free port), or leave --address out`,
        );
        return result(EXIT_CODES.restApiFailed, message);
      }
    }
    const onAbort = () => this.#stopAll({ kind: 'signal', message: 'stopped by signal' });
    config.signal?.addEventListener('abort', onAbort, { once: true });
    // A coordinator that exits before its workers (a second Ctrl-C, an error of its own)
    // leaves none behind: a worker stuck in a script's endless loop would not see it go.
    const onExit = () => {
      for (const worker of this.#workers) worker.kill();
    };
    process.on('exit', onExit);
    try {
      await this.#runWorkers();
    } finally {
      process.off('exit', onExit);
      config.signal?.removeEventListener('abort', onAbort);
      for (const timer of this.#timers) clearInterval(timer);
      await restApi?.close();
    }
    await this.#joinOutputs();
    const ending = decideEnding(
      this.#workers.map((w) => ({
        index: w.index,
        segment: w.segment,
        pid: w.pid,
        result: w.result,
        exit: w.exit!,
        summary: w.index === this.#summaryIndex,
      })),
      config.workers,
    );
    return result(ending.exitCode, ending.reason);
  }

  /**
   * Worker 0 first, the others once its script loaded (a script that fails to load fails
   * once); the clocks start together once every worker is ready; the worker that ends the
   * test is chosen once every worker's scenarios have ended.
   */
  async #runWorkers(): Promise<void> {
    const first = this.#spawn(0);
    await this.#until(() => first.exited || first.stage !== 'starting');
    if (!first.exited && this.#stopCause === undefined) {
      for (let i = 1; i < this.#config.workers; i++) this.#spawn(i);
    }
    await this.#until(() =>
      this.#workers.every((w) => w.exited || (w.stage !== 'starting' && w.stage !== 'loaded')),
    );
    if (this.#workers.some((w) => !w.exited)) this.#start();
    await this.#until(() => this.#workers.every((w) => w.exited || w.stage === 'done'));
    this.#finish();
    await this.#until(() => this.#workers.every((w) => w.exited));
  }

  #spawn(index: number): WorkerProcess {
    const { run, workers, logging, command } = this.#config;
    const { segment, sequence } = this.#segments[index]!;
    const env = run.includeSystemEnv === false ? (run.env ?? {}) : { ...process.env, ...run.env };
    const worker = new WorkerProcess(index, segment, command, {
      message: (w, message) => this.#receive(w, message),
      exit: (w) => this.#exited(w),
    });
    this.#workers.push(worker);
    worker.send({
      kind: 'init',
      index,
      count: workers,
      logging,
      config: {
        ...run,
        overrides: { ...run.overrides, executionSegment: segment, executionSegmentSequence: sequence },
        // Worker 0 writes each output itself; the others a part of it, without a CSV header.
        outputs: (run.outputs ?? []).map((spec) => ({
          ...spec,
          fileName: partPath(outputFileName(spec, env), index),
          ...(index === 0 ? {} : { header: false }),
        })),
      },
    });
    return worker;
  }

  /** Every worker is ready: their clocks start at one moment, and the coordinator's timers with them. */
  #start(): void {
    const atMs = Date.now() + START_DELAY_MS;
    this.#clockMs = atMs;
    for (const worker of this.#workers) worker.send({ kind: 'start', atMs });
    const thresholds = setInterval(() => {
      const abort = this.#judge()?.abort;
      if (abort) {
        this.#stopAll({
          kind: 'threshold',
          message: `threshold ${abort.threshold.source} on ${abort.metric} crossed`,
        });
      }
    }, THRESHOLD_INTERVAL_MS);
    this.#timers.push(thresholds);
    const onProgress = this.#config.onProgress;
    if (onProgress) {
      this.#timers.push(
        setInterval(() => {
          const progress = this.#merged?.progress(this.#elapsedMs());
          if (progress) onProgress(progress);
        }, 1000),
      );
    }
  }

  /**
   * Every worker's scenarios ended (or it is gone): the first one still there ends the
   * test, with every other worker's metrics and results (a dead one's as of its last
   * snapshot); the others close their outputs.
   */
  #finish(): void {
    const summary = this.#workers.find((w) => !w.exited && w.stage === 'done');
    this.#summaryIndex = summary?.index;
    const merged = this.#merged;
    for (const worker of this.#workers) {
      if (worker.exited) continue;
      if (worker !== summary || !merged) {
        worker.send({ kind: 'finish', summary: undefined, cause: this.#stopCause });
        continue;
      }
      const others = this.#workers
        .filter((w) => w !== summary)
        .map((w) => ({ metrics: merged.metricsOf(w.index), results: w.results }));
      worker.send({ kind: 'finish', summary: { others }, cause: this.#stopCause });
    }
    const progress = this.#merged?.progress(this.#elapsedMs());
    if (progress) this.#config.onProgress?.(progress);
  }

  #receive(worker: WorkerProcess, message: FromWorker): void {
    switch (message.kind) {
      case 'loaded':
        worker.stage = 'loaded';
        if (worker.index === 0) this.#merged = new MergedRun(message.shape, this.#config.workers);
        break;
      case 'ready':
        worker.stage = 'ready';
        break;
      case 'setup-data': {
        const atMs = Date.now() + START_DELAY_MS;
        for (const each of this.#workers) each.send({ kind: 'setup-data', data: message.data, atMs });
        break;
      }
      case 'snapshot':
        this.#merged?.apply(worker.index, message.snapshot);
        break;
      case 'stopped':
        this.#stopAll(message.cause);
        break;
      case 'done':
        this.#merged?.apply(worker.index, message.snapshot);
        worker.results = message.results;
        worker.stage = 'done';
        break;
      case 'result':
        worker.result = { exitCode: message.exitCode, reason: message.reason };
        break;
    }
    this.#wake?.();
  }

  /** A worker's process ended: if it died or failed before its share was done, the others stop. */
  #exited(worker: WorkerProcess): void {
    const count = this.#config.workers;
    if (!worker.result) {
      const how = worker.exit?.signal
        ? `was killed by ${worker.exit.signal}`
        : `exited with ${worker.exit?.code}`;
      const message = `engine worker ${worker.index + 1} of ${count} (segment ${worker.segment}, pid ${worker.pid}) ${how}: stopping the others, their data kept`;
      this.#config.logger.log('error', message);
      this.#stopAll({ kind: 'aborted', message });
    } else if (worker.result.exitCode !== EXIT_CODES.ok && worker.index !== this.#summaryIndex) {
      this.#stopAll({
        kind: 'aborted',
        message: `engine worker ${worker.index + 1} of ${count} failed: ${worker.result.reason}`,
      });
    }
    this.#wake?.();
  }

  /** Stops every worker still running with `cause` (the first cause is the test's). */
  #stopAll(cause: StopCause): void {
    this.#stopCause ??= cause;
    for (const worker of this.#workers) worker.send({ kind: 'stop', cause: this.#stopCause });
    this.#wake?.();
  }

  /** Resolves once `done()` holds, looking again at each message or exit. */
  async #until(done: () => boolean): Promise<void> {
    while (!done()) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    this.#wake = undefined;
  }

  /** The merged registry with its thresholds evaluated once per rebuild (what `tainted` and abortOnFail read). */
  #judge(): ThresholdVerdict | undefined {
    const merged = this.#merged;
    if (!merged || this.#clockMs === undefined) return undefined;
    const registry = merged.registry();
    if (registry !== this.#judged) {
      this.#judged = registry;
      this.#verdict = evaluateThresholds(registry, this.#elapsedMs(), false);
    }
    return this.#verdict;
  }

  #elapsedMs(): number {
    return this.#clockMs === undefined ? 0 : Math.max(0, Date.now() - this.#clockMs);
  }

  #restSource(): RestApiSource {
    return {
      registry: () => {
        this.#judge();
        return this.#merged?.registry() ?? this.#empty;
      },
      status: () => {
        const merged = this.#merged?.status();
        const ended = this.#workers.length > 0 && this.#workers.every((w) => w.exited);
        return {
          status: ended ? EXECUTION_STATUS.ended : (merged?.status ?? EXECUTION_STATUS.created),
          vus: merged?.vus ?? 0,
          vusMax: merged?.vusMax ?? 0,
          stopped: this.#stopCause !== undefined,
        };
      },
      elapsedMs: () => this.#elapsedMs(),
    };
  }

  /** Each output made whole in its worker-0 file: the other workers' parts appended. */
  async #joinOutputs(): Promise<void> {
    const { run } = this.#config;
    const env = run.includeSystemEnv === false ? (run.env ?? {}) : { ...process.env, ...run.env };
    for (const spec of run.outputs ?? []) {
      const path = outputFileName(spec, env);
      await joinOutputParts(
        this.#workers.map((w) => ({ path: partPath(path, w.index), whole: w.result !== undefined })),
      ).catch((error: unknown) => {
        this.#config.logger.log('error', `joining the workers' parts of ${path} failed: ${describe(error)}`);
      });
    }
  }
}
