// A worker's side of `--workers`: runTest's coordination (coordination.ts) over the IPC
// channel to the coordinator process.
import type { CoordinatedRun, TestCoordination } from '../coordination.ts';
import type { StopCause, TestRuntime } from '../js/runtime.ts';
import type { ThresholdConfig } from '../metrics/thresholds.ts';
import {
  breakdownState,
  groupState,
  MetricsSnapshotter,
  mergeBreakdownState,
  mergeGroupState,
  mergeMetricStates,
  registryShape,
} from './metrics-state.ts';
import {
  type FromWorker,
  SNAPSHOT_MS,
  type SummaryRole,
  type ToWorker,
  type WorkerInit,
  type WorkerSnapshot,
} from './worker-protocol.ts';

/** The IPC channel of a process started with one (`process` in a worker). */
export interface IpcChannel {
  send?(message: unknown, callback?: (error: Error | null) => void): boolean;
  disconnect?(): void;
  readonly connected?: boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'disconnect', listener: () => void): unknown;
}

/** The coordinator's `init`, and the channel's later messages, none lost in between. */
export interface ReceivedInit {
  init: WorkerInit;
  /** Hands every message after `init` to `listener`: first those that came before this call, in order. */
  listen(listener: (message: ToWorker) => void): void;
}

/**
 * The `init` message the coordinator sends a worker first. One listener stays on the channel
 * and keeps what follows until someone listens: messages that arrive together are emitted
 * one after another before the promise's continuation runs, so a `stop` sent right after
 * `init` (another worker failed as this one started) was dropped when the listener came off
 * with `init`, and the worker then waited for a start that never came.
 */
export function receiveInit(channel: IpcChannel): Promise<ReceivedInit> {
  return new Promise((resolve, reject) => {
    if (!channel.send) {
      reject(new Error('a worker is started by `plateau engine run --workers`, with an IPC channel'));
      return;
    }
    let received = false;
    const early: ToWorker[] = [];
    let deliver: ((message: ToWorker) => void) | undefined;
    channel.on('message', (raw: unknown) => {
      const message = raw as ToWorker;
      if (received) {
        if (deliver) deliver(message);
        else early.push(message);
        return;
      }
      if (message.kind !== 'init') return;
      received = true;
      resolve({
        init: message as WorkerInit,
        listen: (listener) => {
          for (const each of early.splice(0)) listener(each);
          deliver = listener;
        },
      });
    });
  });
}

/**
 * Calls `then` at `atMs` (epoch ms) as every worker sees it, so that their clocks, and their
 * scenarios, start at one moment: a timer to a couple of milliseconds before (timers fire up
 * to a millisecond or two late), then each turn of the event loop (the process has nothing
 * else to do then) until the system clock reaches it. Date.now(), the one clock all
 * processes read alike; each process's performance.timeOrigin is its own reading of it.
 */
function at(atMs: number, then: () => void): void {
  const check = () => {
    if (Date.now() >= atMs) then();
    else setImmediate(check);
  };
  const wait = atMs - Date.now() - 2;
  if (wait > 0) setTimeout(check, wait);
  else check();
}

/** A promise with its resolve at hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * One worker's coordination: reports its registry's shape when loaded, waits for the
 * coordinator's start, shares or takes setup()'s data (worker 0 runs setup), sends a
 * snapshot of its metrics every SNAPSHOT_MS, hands its results over when its scenarios end
 * and, when told it ends the test, merges every other worker's results into its own.
 * A stop from the coordinator stops its run; a stop of its own (exec.test.abort(), a
 * signal) is reported so the coordinator stops the others. If the coordinator goes away,
 * the run stops and its outputs are closed.
 */
export class WorkerLink implements TestCoordination {
  readonly #channel: IpcChannel;
  readonly #index: number;
  #runtime: TestRuntime | undefined;
  #run: CoordinatedRun | undefined;
  #snapshotter: MetricsSnapshotter | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** A stop that came before the run could take it. */
  #pendingStop: StopCause | undefined;
  /** Whether the run's stop came from the coordinator (so it is not reported back). */
  #stoppedByCoordinator = false;
  /** The result was sent: the channel closing now is this worker's own doing. */
  #ended = false;
  readonly #start = deferred<void>();
  readonly #setupData = deferred<unknown>();
  readonly #finish = deferred<Extract<ToWorker, { kind: 'finish' }> | undefined>();

  constructor(channel: IpcChannel, received: ReceivedInit) {
    const init = received.init;
    this.#channel = channel;
    this.#index = init.index;
    received.listen((message) => this.#receive(message));
    channel.on('disconnect', () => {
      if (this.#ended) return;
      this.stop({ kind: 'signal', message: 'the coordinator of the workers is gone' });
      this.#finish.resolve(undefined);
    });
  }

  /** Stops the run (the coordinator's word, or a signal this process got). */
  stop(cause: StopCause, fromCoordinator = false): void {
    this.#start.resolve();
    this.#setupData.resolve(undefined);
    const runtime = this.#runtime;
    if (!runtime) {
      this.#pendingStop ??= cause;
      return;
    }
    if (runtime.stopped) return;
    this.#stoppedByCoordinator = fromCoordinator;
    runtime.stop(cause);
  }

  loaded(runtime: TestRuntime, thresholds: Record<string, ThresholdConfig | ThresholdConfig[]>): void {
    this.#runtime = runtime;
    this.#snapshotter = new MetricsSnapshotter(runtime.registry);
    this.#send({ kind: 'loaded', shape: registryShape(runtime.registry, thresholds) });
    runtime.stopController.signal.addEventListener(
      'abort',
      () => {
        if (!this.#stoppedByCoordinator && runtime.stopCause)
          this.#send({ kind: 'stopped', cause: runtime.stopCause });
      },
      { once: true },
    );
    if (this.#pendingStop) this.stop(this.#pendingStop);
  }

  ready(): Promise<void> {
    this.#send({ kind: 'ready' });
    return this.#start.promise;
  }

  started(run: CoordinatedRun): void {
    this.#run = run;
    this.#timer = setInterval(
      () => this.#send({ kind: 'snapshot', snapshot: this.#snapshot() }),
      SNAPSHOT_MS,
    );
    this.#timer.unref();
  }

  async setupData(run: () => Promise<unknown>): Promise<unknown> {
    if (this.#runtime?.stopped) return undefined;
    // Worker 0 runs setup(); every worker, itself included, then waits for the coordinator's
    // word, which says when all their scenarios start.
    if (this.#index === 0) this.#send({ kind: 'setup-data', data: await run() });
    return this.#setupData.promise;
  }

  async scenariosEnded(): Promise<'summary' | 'part'> {
    if (this.#timer) clearInterval(this.#timer);
    const runtime = this.#runtime!;
    const breakdown = this.#run?.breakdown;
    this.#send({
      kind: 'done',
      snapshot: this.#snapshot(),
      results: {
        rootGroup: groupState(runtime.rootGroup),
        breakdown: breakdown ? breakdownState(breakdown) : undefined,
        failed: runtime.failed,
      },
    });
    const finish = await this.#finish.promise;
    if (finish?.cause) this.stop(finish.cause, true);
    if (!finish?.summary) return 'part';
    this.#merge(finish.summary);
    return 'summary';
  }

  /**
   * Tells the coordinator the run's result, then lets the channel go (an open one would
   * keep the process alive). Call once, when the run has ended and its outputs are closed.
   */
  async result(exitCode: number, reason: string): Promise<void> {
    const channel = this.#channel;
    this.#ended = true;
    if (channel.connected === false || !channel.send) return;
    const message: FromWorker = { kind: 'result', exitCode, reason };
    await new Promise<void>((resolve) => channel.send!(message, () => resolve()));
    // The channel may have closed while the message was written (the coordinator went away).
    if ((channel.connected as boolean | undefined) !== false) channel.disconnect?.();
  }

  /** Every other worker's results, into this run's registry, groups and breakdown. */
  #merge(summary: SummaryRole): void {
    const runtime = this.#runtime!;
    const breakdown = this.#run?.breakdown;
    for (const other of summary.others) {
      mergeMetricStates(runtime.registry, other.metrics);
      if (!other.results) continue;
      mergeGroupState(runtime, other.results.rootGroup);
      if (breakdown && other.results.breakdown) mergeBreakdownState(breakdown, other.results.breakdown);
      if (other.results.failed) runtime.failed = true;
    }
  }

  #snapshot(): WorkerSnapshot {
    const runtime = this.#runtime!;
    return {
      metrics: this.#snapshotter!.take(),
      status: this.#run!.status(),
      vus: runtime.vusActive,
      vusMax: runtime.vusInitialized,
      progress: this.#run!.progress(),
    };
  }

  #receive(message: ToWorker): void {
    switch (message.kind) {
      case 'start':
        at(message.atMs, () => this.#start.resolve());
        return;
      case 'setup-data':
        at(message.atMs, () => {
          if (this.#runtime) this.#runtime.scenariosAtMs = message.atMs;
          this.#setupData.resolve(message.data);
        });
        return;
      case 'stop':
        this.stop(message.cause, true);
        return;
      case 'finish':
        this.#finish.resolve(message);
        return;
      case 'init':
        return;
    }
  }

  #send(message: FromWorker): void {
    if (this.#channel.connected === false || !this.#channel.send) return;
    this.#channel.send(message);
  }
}
