// The dispatch loop both arrival-rate executors share (k6-scheduling.md §1.5).
import type { ConstantArrivalRateScenario, RampingArrivalRateScenario } from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import type { PlannedStart } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, sleepUnless } from './executor.ts';
import { Interrupt } from './interrupt.ts';
import { runIteration } from './iteration.ts';

/**
 * Runs planned starts with k6's VU semantics: preAllocatedVUs are ready when the scenario
 * starts; each start goes to an idle VU or, when none is idle, is dropped
 * (`dropped_iterations`) and, while fewer than maxVUs exist, one more VU is initialized in
 * the background (one at a time; the dropped start is not retried). At maxVUs it warns
 * once. Starts stop at the regular duration; running iterations then get gracefulStop.
 *
 * Starts that fall due together are dispatched in one batch per timer wake-up.
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
    const idle: VirtualUser[] = [];
    for (let i = 0; i < preAllocated; i++) idle.push(vus.create());
    let remainingUnplanned = maxVUs - preAllocated;
    let initializing = false;
    let warned = false;
    const interrupt = new Interrupt();
    const onStop = () => interrupt.abort();
    runtime.stopController.signal.addEventListener('abort', onStop, { once: true });
    const inFlight = new Set<Promise<unknown>>();
    const droppedTags = { ...runtime.runTags, scenario: this.name };
    let iterationInScenario = 0;

    const dispatch = (start: PlannedStart) => {
      const vu = idle.pop();
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
            idle.push(vus.create());
            initializing = false;
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
      });
      inFlight.add(iteration);
    };

    const origin = this.markStarted();
    const starts = this.#plan(tuple)[Symbol.iterator]();
    let next = starts.next();
    await new Promise<void>((resolve) => {
      const stopSignal = runtime.stopController.signal;
      const tick = () => {
        if (stopSignal.aborted) return resolve();
        const elapsedNs = (monotonicMs() - origin) * 1e6;
        while (!next.done && next.value.offsetNs <= elapsedNs) {
          dispatch(next.value);
          next = starts.next();
        }
        if (next.done) return resolve();
        // Timers have 1 ms granularity: sleep at least that long, never spin (a setImmediate
        // loop would burn a whole core between closely spaced starts). Starts that fall
        // due meanwhile go out together in the next batch, at most ~1 ms late.
        const waitMs = (next.value.offsetNs - elapsedNs) / 1e6;
        setTimeout(tick, Math.max(1, Math.floor(waitMs)));
      };
      tick();
    });
    // No more starts: the scenario still lasts its regular duration.
    await sleepUnless(this.regularMsLeft(), runtime.stopController.signal);
    await this.#drain(inFlight, interrupt);
    runtime.stopController.signal.removeEventListener('abort', onStop);
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
