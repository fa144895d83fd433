// The dispatch loop both arrival-rate executors share (k6-scheduling.md §1.5); each executor
// gives it its plan of starts (constant-arrival-rate.ts, ramping-arrival-rate.ts).

import { Fifo } from '../../lib/fifo.ts';
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import type { PlannedStart } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, sleepUnless } from './executor.ts';
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

/**
 * Runs planned starts with k6's VU semantics: preAllocatedVUs are ready when the scenario
 * starts; each start goes to an idle VU or, when none is idle once the I/O already
 * received has been handled, is dropped (`dropped_iterations`) and, while fewer than
 * maxVUs exist, one more VU is initialized in the background (one at a time; the dropped
 * start is not retried). At maxVUs it warns once. Starts stop at the regular duration;
 * running iterations then get gracefulStop.
 *
 * Starts that fall due together are dispatched in one batch per wake-up.
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
    const preAllocated = tuple.scale(config.preAllocatedVUs);
    this.stats.maxVUs = maxVUs;
    if (maxVUs === 0) return; // this segment has no share of the work
    const idle = new IdleVUs(maxVUs);
    const acquired: VirtualUser[] = [];
    const acquire = () => {
      const vu = vus.acquire();
      acquired.push(vu);
      return vu;
    };
    for (let i = 0; i < preAllocated; i++) idle.push(acquire());
    let remainingUnplanned = maxVUs - preAllocated;
    let initializing = false;
    let warned = false;
    /** Set once the scenario has given its VUs back: a VU initialized later is not taken. */
    let ended = false;
    const interrupt = new Interrupt();
    // The test was stopped (signal, abort, threshold): a flag the dispatch loop reads, not
    // the runtime's AbortSignal, whose shape depends on who listens to it.
    let stopped = false;
    const onStop = () => {
      stopped = true;
      interrupt.abort();
    };
    runtime.stopController.signal.addEventListener('abort', onStop, { once: true });
    if (runtime.stopController.signal.aborted) onStop();
    const inFlight = new Set<Promise<unknown>>();
    const droppedTags = runtime.systemTags.scenario
      ? { ...runtime.runTags, scenario: this.name }
      : runtime.runTags;
    let iterationInScenario = 0;
    /** Asks the dispatch loop to check for due starts once the current I/O is handled. */
    let wakeAfterIo: (() => void) | undefined;

    const drop = () => {
      this.stats.dropped++;
      runtime.emitBuiltin('dropped_iterations', 1, droppedTags);
      if (remainingUnplanned === 0) {
        if (!warned) {
          warned = true;
          runtime.logger.log(
            'warning',
            `Insufficient VUs, reached ${maxVUs} active VUs and cannot initialize more`,
            {
              executor: config.executor,
              scenario: this.name,
            },
          );
        }
        return;
      }
      if (!initializing) {
        initializing = true;
        remainingUnplanned--;
        setImmediate(() => {
          initializing = false;
          if (!ended) idle.push(acquire());
        });
      }
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
        wakeAfterIo?.();
      });
      inFlight.add(iteration);
    };

    // Starts that found no idle VU wait one turn of the event loop before they are dropped.
    // In k6 a VU whose iteration has finished is idle at once, on its own goroutine; here
    // the finished response may sit unread until the loop gets to it, and while the process
    // is busy (opening the first connections) that turn is what separates an idle VU from
    // a dropped start. Whatever is still waiting after the I/O already received has been
    // handled is dropped, in order. A start that gets a VU this way is late, and its lag
    // says so.
    const undecided = new Fifo<PlannedStart>();
    let deciding: NodeJS.Immediate | undefined;
    const decide = () => {
      deciding = undefined;
      for (let start = undecided.shift(); start; start = undecided.shift()) {
        if (stopped) {
          drop();
          continue;
        }
        const vu = idle.take();
        if (vu) begin(vu, start);
        else drop();
      }
      afterDecisions?.();
    };
    /** Called once the last undecided start has been decided, while the loop waits for that. */
    let afterDecisions: (() => void) | undefined;

    const dispatch = (start: PlannedStart) => {
      const vu = undecided.size === 0 ? idle.take() : undefined;
      if (vu) return begin(vu, start);
      undecided.push(start);
      deciding ??= setImmediate(decide);
    };

    const origin = this.markStarted();
    const starts = this.#plan(tuple)[Symbol.iterator]();
    let next = starts.next();
    // Starts are dispatched by a timer (at most ~1 ms late: timers have 1 ms granularity,
    // and a setImmediate loop would burn a whole core between closely spaced starts), and
    // also right after the event loop handled I/O, such as a finished iteration: at high
    // rates the loop turns far more often than once a millisecond, so starts that fell due
    // meanwhile go out at once instead of waiting for the timer.
    await new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      let timerDue = Number.POSITIVE_INFINITY;
      let immediate: NodeJS.Immediate | undefined;
      let finished = false;
      const finish = () => {
        finished = true;
        clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        wakeAfterIo = undefined;
        // Starts already due are decided before the scenario stops starting.
        if (deciding) afterDecisions = resolve;
        else resolve();
      };
      const tick = () => {
        immediate = undefined;
        if (finished) return;
        if (stopped) return finish();
        const now = monotonicMs();
        const elapsedNs = (now - origin) * 1e6;
        while (!next.done && next.value.offsetNs <= elapsedNs) {
          dispatch(next.value);
          next = starts.next();
        }
        if (next.done) return finish();
        const due = origin + next.value.offsetNs / 1e6;
        // Keep an armed timer that fires in time; otherwise arm one for the next start.
        if (timerDue <= due + 1) return;
        clearTimeout(timer);
        const waitMs = Math.max(1, Math.floor(due - now));
        timerDue = now + waitMs;
        timer = setTimeout(onTimer, waitMs);
      };
      const onTimer = () => {
        timerDue = Number.POSITIVE_INFINITY;
        tick();
      };
      wakeAfterIo = () => {
        if (immediate || next.done) return;
        if (monotonicMs() - origin - next.value.offsetNs / 1e6 >= IO_WAKE_OVERDUE_MS) {
          immediate = setImmediate(tick);
        }
      };
      tick();
    });
    // No more starts: the scenario still lasts its regular duration.
    await sleepUnless(this.regularMsLeft(), runtime.stopController.signal);
    await this.#drain(inFlight, interrupt);
    runtime.stopController.signal.removeEventListener('abort', onStop);
    ended = true;
    for (const vu of acquired) vus.release(vu);
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
