// The dispatch loop both arrival-rate executors share (k6-scheduling.md §1.5); each executor
// gives it its plan of starts (constant-arrival-rate.ts, ramping-arrival-rate.ts).

import { Fifo } from '../../lib/fifo.ts';
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import type { PlannedStart } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, sleepUnless, type VuPool } from './executor.ts';
import { Interrupt } from './interrupt.ts';
import { runIteration } from './iteration.ts';

/** The VU fields both arrival-rate executors have. */
export interface ArrivalRateVUs {
  preAllocatedVUs: number;
  maxVUs: number;
}

/** preAllocatedVUs (required) and maxVUs (at least as many; preAllocatedVUs when unset). */
export function readArrivalRateVUs(fields: ScenarioFields): ArrivalRateVUs {
  const preAllocatedVUs = fields.integer('preAllocatedVUs', undefined, 0);
  const maxVUs = fields.integer('maxVUs', preAllocatedVUs, 0);
  if (maxVUs < preAllocatedVUs) {
    fields.problem('maxVUs', `${maxVUs} is below preAllocatedVUs ${preAllocatedVUs}`, 'use at least as many');
  }
  return { preAllocatedVUs, maxVUs };
}

/**
 * How late the next start may be before finished I/O dispatches it ahead of the timer.
 * At 0 every start goes out on its own and the event loop wakes far more often (much more
 * CPU); from about half a millisecond the lag is the timer's alone. This value trades a
 * little CPU for lag: `npm run bench:engine`, docs/engine.md "How it keeps time".
 */
const IO_WAKE_OVERDUE_MS = 0.1;

/**
 * Idle VUs, the longest idle first. k6's VUs wait for iterations on one channel, whose
 * receivers Go serves in order, so every VU gets work in turn; with a VU's own connections
 * (as in k6) that decides how many connections the target sees.
 */
class IdleVUs {
  // A ring over one array for the executor's life: no array per refill (an emptied `[]`
  // is born for small integers and changes shape at its first VU, throwing away the
  // optimized code of every caller), and no garbage per start.
  #ring: (VirtualUser | undefined)[];
  #head = 0;
  #size = 0;

  constructor(capacity: number) {
    this.#ring = new Array<VirtualUser | undefined>(Math.max(1, capacity)).fill(undefined);
  }

  push(vu: VirtualUser): void {
    const capacity = this.#ring.length;
    if (this.#size === capacity) {
      // More VUs than planned (cannot happen while maxVUs bounds them): grow, in order.
      const ring = new Array<VirtualUser | undefined>(capacity * 2).fill(undefined);
      for (let i = 0; i < capacity; i++) ring[i] = this.#ring[(this.#head + i) % capacity];
      this.#ring = ring;
      this.#head = 0;
    }
    // Modulo rather than a wrap-around branch: a branch the rehearsal never takes (its ring
    // is larger) would be thrown away, optimized code and all, the first time the test does.
    this.#ring[(this.#head + this.#size) % this.#ring.length] = vu;
    this.#size++;
  }

  take(): VirtualUser | undefined {
    if (this.#size === 0) return undefined;
    const vu = this.#ring[this.#head];
    this.#ring[this.#head] = undefined;
    this.#head = (this.#head + 1) % this.#ring.length;
    this.#size--;
    return vu;
  }
}

/** Whether the test was stopped (signal, abort, threshold): a field the dispatch loop reads,
 * not the runtime's AbortSignal, whose shape depends on who listens to it. */
class StopFlag {
  stopped = false;
}

/**
 * The VUs a scenario holds: preAllocatedVUs from its start, then, after a dropped start
 * while fewer than maxVUs exist, one more initialized in the background (one at a time; the
 * dropped start is not retried), as k6 does. At maxVUs it warns once.
 */
class VuGrowth {
  readonly #vus: VuPool;
  readonly #idle: IdleVUs;
  readonly #acquired: VirtualUser[] = [];
  readonly #warn: () => void;
  #remaining: number;
  #initializing = false;
  #warned = false;
  /** Set once the scenario has given its VUs back: a VU initialized later is not taken. */
  #ended = false;

  constructor(vus: VuPool, idle: IdleVUs, preAllocated: number, maxVUs: number, warn: () => void) {
    this.#vus = vus;
    this.#idle = idle;
    this.#warn = warn;
    for (let i = 0; i < preAllocated; i++) idle.push(this.#acquire());
    this.#remaining = maxVUs - preAllocated;
  }

  /** A start found no VU: grow by one unless at maxVUs (then warn, once). */
  afterDrop(): void {
    if (this.#remaining === 0) {
      if (!this.#warned) {
        this.#warned = true;
        this.#warn();
      }
      return;
    }
    if (this.#initializing) return;
    this.#initializing = true;
    this.#remaining--;
    setImmediate(() => {
      this.#initializing = false;
      if (!this.#ended) this.#idle.push(this.#acquire());
    });
  }

  /** The scenario ended: its VUs go back to the test's pool for later scenarios. */
  release(): void {
    this.#ended = true;
    for (const vu of this.#acquired) this.#vus.release(vu);
  }

  #acquire(): VirtualUser {
    const vu = this.#vus.acquire();
    this.#acquired.push(vu);
    return vu;
  }
}

/**
 * The decision for each start: an idle VU at once, or one loop turn of waiting, then a VU
 * or a drop. In k6 a VU whose iteration has finished is idle at once, on its own goroutine;
 * here the finished response may sit unread until the loop gets to it, and while the process
 * is busy (opening the first connections) that turn is what separates an idle VU from a
 * dropped start. Whatever is still waiting after the I/O already received has been handled
 * is dropped, in order. A start that gets a VU this way is late, and its lag says so.
 */
class PendingStarts {
  readonly #waiting = new Fifo<PlannedStart>();
  readonly #idle: IdleVUs;
  readonly #stop: StopFlag;
  readonly #begin: (vu: VirtualUser, start: PlannedStart) => void;
  readonly #drop: () => void;
  readonly #decideAll = () => this.#decide();
  #deciding: NodeJS.Immediate | undefined;
  #afterDecisions: (() => void) | undefined;

  constructor(
    idle: IdleVUs,
    stop: StopFlag,
    begin: (vu: VirtualUser, start: PlannedStart) => void,
    drop: () => void,
  ) {
    this.#idle = idle;
    this.#stop = stop;
    this.#begin = begin;
    this.#drop = drop;
  }

  /** A start that fell due. */
  dispatch(start: PlannedStart): void {
    const vu = this.#waiting.size === 0 ? this.#idle.take() : undefined;
    if (vu) {
      this.#begin(vu, start);
      return;
    }
    this.#waiting.push(start);
    this.#deciding ??= setImmediate(this.#decideAll);
  }

  /** Resolves once every waiting start has been decided (at once when none waits). */
  decided(): Promise<void> {
    if (!this.#deciding) return Promise.resolve();
    return new Promise((resolve) => {
      this.#afterDecisions = resolve;
    });
  }

  #decide(): void {
    this.#deciding = undefined;
    for (let start = this.#waiting.shift(); start; start = this.#waiting.shift()) {
      if (this.#stop.stopped) {
        this.#drop();
        continue;
      }
      const vu = this.#idle.take();
      if (vu) this.#begin(vu, start);
      else this.#drop();
    }
    this.#afterDecisions?.();
  }
}

/**
 * When starts go out. A timer dispatches them (at most ~1 ms late: timers have 1 ms
 * granularity, and a setImmediate loop would burn a whole core between closely spaced
 * starts), and so does the event loop right after it handled I/O, such as a finished
 * iteration: at high rates the loop turns far more often than once a millisecond, so starts
 * that fell due meanwhile go out at once instead of waiting for the timer.
 */
class StartClock {
  readonly #origin: number;
  readonly #starts: Iterator<PlannedStart>;
  readonly #dispatch: (start: PlannedStart) => void;
  readonly #stop: StopFlag;
  readonly #tick = () => this.#onTick();
  readonly #onTimer = () => {
    this.#timerDue = Number.POSITIVE_INFINITY;
    this.#onTick();
  };
  #next: IteratorResult<PlannedStart>;
  #timer: NodeJS.Timeout | undefined;
  #timerDue = Number.POSITIVE_INFINITY;
  #immediate: NodeJS.Immediate | undefined;
  #finished = false;
  #resolve: (() => void) | undefined;

  constructor(
    origin: number,
    starts: Iterable<PlannedStart>,
    dispatch: (start: PlannedStart) => void,
    stop: StopFlag,
  ) {
    this.#origin = origin;
    this.#starts = starts[Symbol.iterator]();
    this.#next = this.#starts.next();
    this.#dispatch = dispatch;
    this.#stop = stop;
  }

  /** Dispatches every start at its time; resolves after the last one, or when the test stops. */
  run(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      this.#onTick();
    });
  }

  /** The test stopped: no more starts, now rather than at the next start's timer. */
  stop(): void {
    if (!this.#finished) this.#finish();
  }

  /** The event loop handled I/O: dispatch what fell due since, unless the timer is about to. */
  wakeAfterIo(): void {
    if (this.#finished || this.#immediate || this.#next.done) return;
    if (monotonicMs() - this.#origin - this.#next.value.offsetNs / 1e6 >= IO_WAKE_OVERDUE_MS) {
      this.#immediate = setImmediate(this.#tick);
    }
  }

  #onTick(): void {
    this.#immediate = undefined;
    if (this.#finished) return;
    if (this.#stop.stopped) {
      this.#finish();
      return;
    }
    const now = monotonicMs();
    const elapsedNs = (now - this.#origin) * 1e6;
    while (!this.#next.done && this.#next.value.offsetNs <= elapsedNs) {
      this.#dispatch(this.#next.value);
      this.#next = this.#starts.next();
    }
    if (this.#next.done) {
      this.#finish();
      return;
    }
    const due = this.#origin + this.#next.value.offsetNs / 1e6;
    // Keep an armed timer that fires in time; otherwise arm one for the next start.
    if (this.#timerDue <= due + 1) return;
    clearTimeout(this.#timer);
    const waitMs = Math.max(1, Math.floor(due - now));
    this.#timerDue = now + waitMs;
    this.#timer = setTimeout(this.#onTimer, waitMs);
  }

  #finish(): void {
    this.#finished = true;
    clearTimeout(this.#timer);
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#resolve?.();
  }
}

/**
 * Runs planned starts with k6's VU semantics: preAllocatedVUs are ready when the scenario
 * starts; each start goes to an idle VU or, when none is idle once the I/O already
 * received has been handled, is dropped (`dropped_iterations`) and the scenario grows by a
 * VU (VuGrowth). Starts stop at the regular duration; running iterations then get
 * gracefulStop. Starts that fall due together are dispatched in one batch per wake-up.
 *
 * The loop is four objects with one job each: IdleVUs (who is free), VuGrowth (VUs beyond
 * preAllocatedVUs), PendingStarts (the decision for each start: a VU or a drop) and
 * StartClock (when starts go out).
 */
export class ArrivalRateExecutor extends ScenarioExecutor {
  readonly #config: BaseScenario & ArrivalRateVUs & { executor: string };
  readonly #plan: (tuple: ExecutionTuple) => Iterable<PlannedStart>;

  constructor(
    env: ExecutorEnv,
    config: BaseScenario & ArrivalRateVUs & { executor: string },
    plan: (tuple: ExecutionTuple) => Iterable<PlannedStart>,
    regularDurationNs: number,
    scenarioEnv: Record<string, string>,
  ) {
    super(env, regularDurationNs, scenarioEnv);
    this.#config = config;
    this.#plan = plan;
  }

  async run(): Promise<void> {
    const { runtime, tuple, vus, exec } = this.environment;
    const config = this.#config;
    const maxVUs = tuple.scale(config.maxVUs);
    this.stats.maxVUs = maxVUs;
    if (maxVUs === 0) return; // this segment has no share of the work
    const idle = new IdleVUs(maxVUs);
    const growth = new VuGrowth(vus, idle, tuple.scale(config.preAllocatedVUs), maxVUs, () =>
      runtime.logger.log(
        'warning',
        `Insufficient VUs, reached ${maxVUs} active VUs and cannot initialize more`,
        {
          executor: config.executor,
          scenario: this.name,
        },
      ),
    );
    const interrupt = new Interrupt();
    const stop = new StopFlag();
    let clock: StartClock | undefined;
    const onStop = () => {
      stop.stopped = true;
      interrupt.abort();
      clock?.stop();
    };
    runtime.stopController.signal.addEventListener('abort', onStop, { once: true });
    if (runtime.stopController.signal.aborted) onStop();
    const inFlight = new Set<Promise<unknown>>();
    const droppedTags = runtime.systemTags.scenario
      ? { ...runtime.runTags, scenario: this.name }
      : runtime.runTags;
    let iterationInScenario = 0;

    const drop = () => {
      this.stats.dropped++;
      runtime.emitBuiltin('dropped_iterations', 1, droppedTags);
      growth.afterDrop();
    };
    const begin = (vu: VirtualUser, start: PlannedStart) => {
      this.stats.active++;
      const iteration = runIteration(
        runtime,
        this,
        exec,
        vu,
        iterationInScenario++,
        start.iterationInTest,
        interrupt,
      ).then((outcome) => {
        this.stats.active--;
        if (outcome === 'completed') this.stats.iterations++;
        idle.push(vu);
        inFlight.delete(iteration);
        clock?.wakeAfterIo();
      });
      inFlight.add(iteration);
    };
    const pending = new PendingStarts(idle, stop, begin, drop);
    clock = new StartClock(this.markStarted(), this.#plan(tuple), (start) => pending.dispatch(start), stop);
    await clock.run();
    // Starts already due are decided before the scenario stops starting.
    await pending.decided();
    // No more starts: the scenario still lasts its regular duration.
    await sleepUnless(this.regularMsLeft(), runtime.stopController.signal);
    await this.#drain(inFlight, interrupt);
    runtime.stopController.signal.removeEventListener('abort', onStop);
    growth.release();
  }

  /** Gives running iterations gracefulStop, then interrupts what is left. */
  async #drain(inFlight: Set<Promise<unknown>>, interrupt: Interrupt): Promise<void> {
    if (inFlight.size === 0) return;
    const graceful = new AbortController();
    const allDone = Promise.all(inFlight).then(() => graceful.abort());
    await sleepUnless(
      this.#config.gracefulStopNs / 1e6,
      AbortSignal.any([graceful.signal, interrupt.toSignal()]),
    );
    interrupt.abort();
    await allDone;
  }
}
