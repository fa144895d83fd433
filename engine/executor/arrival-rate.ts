// The dispatch loop both arrival-rate executors share (k6-scheduling.md §1.5).
import type { ConstantArrivalRateScenario, RampingArrivalRateScenario } from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import type { PlannedStart } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, sleepUnless } from './executor.ts';
import { Interrupt } from './interrupt.ts';
import { runIteration } from './iteration.ts';

/**
 * How late the next start may be before finished I/O dispatches it ahead of the timer.
 * Measured at 10,000/s (bench/engine-accuracy.ts): 0 gave start lag p50 0.15 ms but ~40 %
 * more CPU (every start went out on its own, responses came back one at a time, and the
 * event loop woke up far more often); 0.5 ms left lag where the timer alone put it (p50
 * 0.8 ms); 0.1 ms gave p50 0.55 ms, p99 ~2.1 ms for ~7 µs more CPU per request.
 */
const IO_WAKE_OVERDUE_MS = 0.1;

/**
 * Idle VUs, the longest idle first. k6's VUs wait for iterations on one channel, whose
 * receivers Go serves in order, so every VU gets work in turn; with a VU's own connections
 * (as in k6) that decides how many connections the target sees.
 */
class IdleVUs {
  #items: (VirtualUser | undefined)[] = [];
  #head = 0;

  push(vu: VirtualUser): void {
    this.#items.push(vu);
  }

  take(): VirtualUser | undefined {
    if (this.#head === this.#items.length) return undefined;
    const vu = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return vu;
  }
}

/**
 * Runs planned starts with k6's VU semantics: preAllocatedVUs are ready when the scenario
 * starts; each start goes to an idle VU or, when none is idle, is dropped
 * (`dropped_iterations`) and, while fewer than maxVUs exist, one more VU is initialized in
 * the background (one at a time; the dropped start is not retried). At maxVUs it warns
 * once. Starts stop at the regular duration; running iterations then get gracefulStop.
 *
 * Starts that fall due together are dispatched in one batch per wake-up.
 */
export class ArrivalRateExecutor extends ScenarioExecutor {
  readonly #config: ConstantArrivalRateScenario | RampingArrivalRateScenario;
  readonly #plan: (tuple: ExecutionTuple) => Iterable<PlannedStart>;

  constructor(
    env: ExecutorEnv,
    config: ConstantArrivalRateScenario | RampingArrivalRateScenario,
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
    const idle = new IdleVUs();
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
    const onStop = () => interrupt.abort();
    runtime.stopController.signal.addEventListener('abort', onStop, { once: true });
    const inFlight = new Set<Promise<unknown>>();
    const droppedTags = { ...runtime.runTags, scenario: this.name };
    let iterationInScenario = 0;
    /** Asks the dispatch loop to check for due starts once the current I/O is handled. */
    let wakeAfterIo: (() => void) | undefined;

    const dispatch = (start: PlannedStart) => {
      const vu = idle.take();
      if (!vu) {
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
        return;
      }
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

    const origin = this.markStarted();
    const starts = this.#plan(tuple)[Symbol.iterator]();
    let next = starts.next();
    // Starts are dispatched by a timer (at most ~1 ms late: timers have 1 ms granularity,
    // and a setImmediate loop would burn a whole core between closely spaced starts), and
    // also right after the event loop handled I/O, such as a finished iteration: at high
    // rates the loop turns far more often than once a millisecond, so starts that fell due
    // meanwhile go out at once instead of waiting for the timer.
    await new Promise<void>((resolve) => {
      const stopSignal = runtime.stopController.signal;
      let timer: NodeJS.Timeout | undefined;
      let timerDue = Number.POSITIVE_INFINITY;
      let immediate: NodeJS.Immediate | undefined;
      let finished = false;
      const finish = () => {
        finished = true;
        clearTimeout(timer);
        if (immediate) clearImmediate(immediate);
        wakeAfterIo = undefined;
        resolve();
      };
      const tick = () => {
        immediate = undefined;
        if (finished) return;
        if (stopSignal.aborted) return finish();
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
