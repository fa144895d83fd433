// shared-iterations: `vus` VUs share `iterations` iterations, within maxDuration.
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { ExecutorType } from './executor-type.ts';
import { DEFAULT_MAX_DURATION_NS } from './per-vu-iterations.ts';
import { type IterationBudget, VuBasedExecutor } from './vu-based.ts';

export interface SharedIterationsScenario extends BaseScenario {
  executor: 'shared-iterations';
  vus: number;
  iterations: number;
  maxDurationNs: number;
}

/** One count for all VUs; iterations are numbered in the order they start. */
class SharedBudget implements IterationBudget {
  #left: number;
  #taken = 0;

  constructor(iterations: number) {
    this.#left = iterations;
  }

  take(): number | undefined {
    if (this.#left <= 0) return undefined;
    this.#left--;
    return this.#taken++;
  }

  left(): number {
    return this.#left;
  }
}

export const sharedIterations: ExecutorType<SharedIterationsScenario> = {
  name: 'shared-iterations',
  parse(base: BaseScenario, fields: ScenarioFields): SharedIterationsScenario {
    const vus = fields.integer('vus', 1, 1);
    const iterations = fields.integer('iterations', 1, 1);
    if (iterations < vus) {
      fields.problem(
        'iterations',
        `${iterations} is fewer than vus ${vus}`,
        'use at least one iteration per VU',
      );
    }
    return {
      ...base,
      executor: 'shared-iterations',
      vus,
      iterations,
      maxDurationNs: fields.duration('maxDuration', DEFAULT_MAX_DURATION_NS),
    };
  },
  regularDurationNs: (config) => config.maxDurationNs,
  plannedVUs: (config, tuple) => tuple.scale(config.vus),
  create(env, config, scenarioEnv) {
    const plan = {
      steps: [{ atNs: 0, vus: env.tuple.scale(config.vus) }],
      rampDownNs: 0,
      budget: new SharedBudget(env.tuple.scale(config.iterations)),
    };
    return new VuBasedExecutor(env, config, plan, config.maxDurationNs, scenarioEnv);
  },
};
