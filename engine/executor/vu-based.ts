// The executors that keep VUs looping: constant-vus, ramping-vus, per-vu- and shared-iterations.
import type {
  ConstantVusScenario,
  PerVuIterationsScenario,
  RampingVusScenario,
  SharedIterationsScenario,
} from '../config/scenarios.ts';
import type { VirtualUser } from '../js/context.ts';
import { type ExecutorEnv, monotonicMs, ScenarioExecutor, segmentedIndex, sleepUnless } from './executor.ts';
import { Interrupt } from './interrupt.ts';
import { runIteration } from './iteration.ts';

type VuScenario =
  | ConstantVusScenario
  | RampingVusScenario
  | PerVuIterationsScenario
  | SharedIterationsScenario;

/** A change in the number of VUs a ramping-vus scenario should run. */
export interface VuStep {
  /** From the scenario start, ns. */
  atNs: number;
  vus: number;
}

/**
 * The ramping-vus plan: one step each time the linear ramp crosses a whole number of VUs,
 * from `startVUs` through each stage to its target (a 0-duration stage jumps at once).
 */
export function rampingVuSteps(
  startVUs: number,
  stages: readonly { durationNs: number; target: number }[],
): VuStep[] {
  const steps: VuStep[] = [{ atNs: 0, vus: startVUs }];
  let from = startVUs;
  let stageStart = 0;
  for (const stage of stages) {
    const delta = stage.target - from;
    if (stage.durationNs === 0 || delta === 0) {
      if (delta !== 0) steps.push({ atNs: stageStart, vus: stage.target });
    } else {
      const count = Math.abs(delta);
      for (let k = 1; k <= count; k++) {
        steps.push({
          atNs: stageStart + Math.trunc((stage.durationNs * k) / count),
          vus: from + Math.sign(delta) * k,
        });
      }
    }
    from = stage.target;
    stageStart += stage.durationNs;
  }
  return steps;
}

/**
 * Runs VU loops. Each VU repeats iterations while its slot is wanted and the scenario's
 * regular duration lasts; afterwards running iterations get gracefulStop, then are
 * interrupted. ramping-vus releases VUs above the target after their current iteration
 * (gracefulRampDown, then interrupted).
 */
export class VuBasedExecutor extends ScenarioExecutor {
  readonly #config: VuScenario;

  constructor(
    env: ExecutorEnv,
    config: VuScenario,
    regularDurationNs: number,
    scenarioEnv: Record<string, string>,
  ) {
    super(env, regularDurationNs, scenarioEnv);
    this.#config = config;
  }

  async run(): Promise<void> {
    const { runtime, tuple, vus: factory, exec } = this.environment;
    const config = this.#config;
    const steps =
      config.executor === 'ramping-vus'
        ? rampingVuSteps(config.startVUs, config.stages).map((s) => ({ ...s, vus: tuple.scale(s.vus) }))
        : [{ atNs: 0, vus: tuple.scale(config.vus) }];
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

    // Iteration budget of the iteration-based executors.
    const perVuLeft = config.executor === 'per-vu-iterations' ? pool.map(() => config.iterations) : undefined;
    let sharedLeft =
      config.executor === 'shared-iterations' ? tuple.scale(config.iterations) : Number.POSITIVE_INFINITY;
    let iterationInScenario = 0;
    const perVuCount = pool.map(() => 0);

    const takeIteration = (slot: number): number | undefined => {
      if (perVuLeft) {
        if (perVuLeft[slot]! <= 0) return undefined;
        perVuLeft[slot]!--;
        // per-vu-iterations numbers iterations by VU: VU v's i-th is v·iterations + i.
        return slot * (config as PerVuIterationsScenario).iterations + perVuCount[slot]!++;
      }
      if (sharedLeft <= 0) return undefined;
      sharedLeft--;
      return iterationInScenario;
    };

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
    const rampDownNs = config.executor === 'ramping-vus' ? config.gracefulRampDownNs : 0;
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
    const iterationBased = config.executor === 'per-vu-iterations' || config.executor === 'shared-iterations';
    const allLoops = () => Promise.all(loops.values());
    if (iterationBased) {
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
    if (iterationBased) {
      const undone = perVuLeft ? perVuLeft.reduce((a, b) => a + b, 0) : sharedLeft;
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
