// The VU loops the closed-model executors share: constant-vus, ramping-vus,
// per-vu-iterations and shared-iterations each give them a plan (their own files).
import type { BaseScenario } from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, segmentedIndex, sleepUnless } from './executor.ts';
import { Interrupt } from './interrupt.ts';
import { runIteration } from './iteration.ts';

/** A change in the number of VUs a scenario should run. */
export interface VuStep {
  /** From the scenario start, ns. */
  atNs: number;
  vus: number;
}

/** How a VU-based scenario runs: its VUs over time, and the iterations it may start. */
export interface VuPlan {
  /** The VUs wanted over time, this instance's share; the first step is at 0. */
  steps: VuStep[];
  /** How long the iteration of a VU released by a ramp-down may still run, ns. */
  rampDownNs: number;
  /**
   * The iterations of an iteration-based executor, which ends when they are done or at its
   * maxDuration; without one, VUs loop until the regular end.
   */
  budget?: IterationBudget;
}

/** The iterations an iteration-based scenario may still start, and their numbering. */
export interface IterationBudget {
  /** The next iteration's index in this instance for the VU in `slot`; undefined when none is left. */
  take(slot: number): number | undefined;
  /** Iterations not started (counted as dropped when the scenario ends). */
  left(): number;
}

/**
 * Runs VU loops. Each VU repeats iterations while its slot is wanted and the scenario's
 * regular duration lasts; afterwards running iterations get gracefulStop, then are
 * interrupted. ramping-vus releases VUs above the target after their current iteration
 * (gracefulRampDown, then interrupted).
 */
export class VuBasedExecutor extends ScenarioExecutor {
  readonly #config: BaseScenario;
  readonly #plan: VuPlan;

  constructor(
    env: ExecutorEnv,
    config: BaseScenario,
    plan: VuPlan,
    regularDurationNs: number,
    scenarioEnv: Record<string, string>,
  ) {
    super(env, regularDurationNs, scenarioEnv);
    this.#config = config;
    this.#plan = plan;
  }

  async run(): Promise<void> {
    const { runtime, tuple, vus: factory, exec } = this.environment;
    const config = this.#config;
    const { steps, rampDownNs, budget } = this.#plan;
    const maxVUs = Math.max(0, ...steps.map((s) => s.vus));
    this.stats.maxVUs = maxVUs;
    const pool: VirtualUser[] = Array.from({ length: maxVUs }, () => factory.acquire());
    const regularEnd = new AbortController();
    const interruptAll = new Interrupt();
    const onStop = () => {
      regularEnd.abort();
      interruptAll.abort();
    };
    runtime.stopController.signal.addEventListener('abort', onStop, { once: true });
    const slotInterrupts = pool.map(() => new Interrupt());
    let wanted = steps[0]?.vus ?? 0;
    const loops = new Map<number, Promise<void>>();
    const toGlobal = segmentedIndex(tuple);

    let iterationInScenario = 0;
    const takeIteration = (slot: number): number | undefined =>
      budget ? budget.take(slot) : iterationInScenario;

    const loop = async (slot: number) => {
      const vu = pool[slot]!;
      const signal = Interrupt.any(interruptAll, slotInterrupts[slot]!);
      while (!regularEnd.signal.aborted && slot < wanted) {
        const local = takeIteration(slot);
        if (local === undefined) break;
        const index = iterationInScenario++;
        this.stats.active++;
        const outcome = await runIteration(runtime, this, exec, vu, index, toGlobal(local), signal);
        this.stats.active--;
        if (outcome === 'completed') this.stats.iterations++;
        else break;
      }
      loops.delete(slot);
    };
    const startLoops = () => {
      for (let slot = 0; slot < wanted; slot++) if (!loops.has(slot)) loops.set(slot, loop(slot));
    };

    this.markStarted();
    startLoops();
    for (const step of steps.slice(1)) {
      await sleepUnless(step.atNs / 1e6 - (monotonicMs() - this.startedMonotonic), regularEnd.signal);
      if (regularEnd.signal.aborted) break;
      const previous = wanted;
      wanted = step.vus;
      if (wanted > previous) startLoops();
      for (let slot = wanted; slot < previous; slot++) {
        // The running iteration gets gracefulRampDown; a later ramp-up uses a fresh interrupt.
        const released = slotInterrupts[slot]!;
        slotInterrupts[slot] = new Interrupt();
        setTimeout(() => released.abort(), rampDownNs / 1e6).unref();
      }
    }
    const allLoops = () => Promise.all(loops.values());
    if (budget) {
      // These end when the iterations are done or maxDuration passes, whichever is first;
      // the maxDuration timer is cancelled either way so it cannot hold the process open.
      const finished = new AbortController();
      const loopsDone = allLoops().then(() => finished.abort());
      await sleepUnless(this.regularMs, AbortSignal.any([runtime.stopController.signal, finished.signal]));
      finished.abort();
      void loopsDone;
    } else {
      await sleepUnless(this.regularMsLeft(), runtime.stopController.signal);
    }
    regularEnd.abort();
    if (loops.size > 0) {
      const graceful = new AbortController();
      const done = allLoops().then(() => graceful.abort());
      await sleepUnless(
        config.gracefulStopNs / 1e6,
        AbortSignal.any([graceful.signal, interruptAll.toSignal()]),
      );
      interruptAll.abort();
      await done;
    }
    if (budget) {
      const undone = budget.left();
      if (undone > 0) {
        this.stats.dropped += undone;
        const tags = runtime.systemTags.scenario
          ? { ...runtime.runTags, scenario: this.name }
          : runtime.runTags;
        runtime.emitBuiltin('dropped_iterations', undone, tags);
      }
    }
    runtime.stopController.signal.removeEventListener('abort', onStop);
    for (const vu of pool) factory.release(vu);
  }
}
