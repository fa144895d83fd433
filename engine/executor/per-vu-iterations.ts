// per-vu-iterations: each of `vus` VUs runs `iterations` iterations, within maxDuration.
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { ExecutorType } from './executor-type.ts';
import { type IterationBudget, VuBasedExecutor } from './vu-based.ts';

/** k6's default maxDuration of the iteration-based executors. */
export const DEFAULT_MAX_DURATION_NS = 600e9;

export interface PerVuIterationsScenario extends BaseScenario {
  executor: 'per-vu-iterations';
  vus: number;
  iterations: number;
  maxDurationNs: number;
}

/** Each VU's own count; VU v's i-th iteration is number v·iterations + i in this instance. */
class PerVuBudget implements IterationBudget {
  readonly #iterations: number;
  readonly #done: number[];

  constructor(vus: number, iterations: number) {
    this.#iterations = iterations;
    this.#done = Array.from({ length: vus }, () => 0);
  }

  take(slot: number): number | undefined {
    const done = this.#done[slot]!;
    if (done >= this.#iterations) return undefined;
    this.#done[slot] = done + 1;
    return slot * this.#iterations + done;
  }

  left(): number {
    return this.#done.reduce((sum, done) => sum + this.#iterations - done, 0);
  }
}

export const perVuIterations: ExecutorType<PerVuIterationsScenario> = {
  name: 'per-vu-iterations',
  parse(base: BaseScenario, fields: ScenarioFields): PerVuIterationsScenario {
    return {
      ...base,
      executor: 'per-vu-iterations',
      vus: fields.integer('vus', 1, 1),
      iterations: fields.integer('iterations', 1, 1),
      maxDurationNs: fields.duration('maxDuration', DEFAULT_MAX_DURATION_NS),
    };
  },
  regularDurationNs: (config) => config.maxDurationNs,
  plannedVUs: (config, tuple) => tuple.scale(config.vus),
  create(env, config, scenarioEnv) {
    const vus = env.tuple.scale(config.vus);
    const plan = {
      steps: [{ atNs: 0, vus }],
      rampDownNs: 0,
      budget: new PerVuBudget(vus, config.iterations),
    };
    return new VuBasedExecutor(env, config, plan, config.maxDurationNs, scenarioEnv);
  },
};
