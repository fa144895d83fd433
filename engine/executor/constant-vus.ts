// constant-vus: `vus` VUs loop iterations for `duration` (the closed model).
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { ExecutorType } from './executor-type.ts';
import { VuBasedExecutor } from './vu-based.ts';

export interface ConstantVusScenario extends BaseScenario {
  executor: 'constant-vus';
  vus: number;
  durationNs: number;
}

export const constantVus: ExecutorType<ConstantVusScenario> = {
  name: 'constant-vus',
  parse(base: BaseScenario, fields: ScenarioFields): ConstantVusScenario {
    const durationNs = fields.requiredDuration();
    return { ...base, executor: 'constant-vus', vus: fields.integer('vus', 1, 0), durationNs };
  },
  regularDurationNs: (config) => config.durationNs,
  plannedVUs: (config, tuple) => tuple.scale(config.vus),
  create(env, config, scenarioEnv) {
    const plan = { steps: [{ atNs: 0, vus: env.tuple.scale(config.vus) }], rampDownNs: 0 };
    return new VuBasedExecutor(env, config, plan, config.durationNs, scenarioEnv);
  },
};
