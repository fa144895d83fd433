// ramping-vus: the number of looping VUs follows `stages` from `startVUs`; VUs above the
// target finish their iteration within gracefulRampDown (the closed model).
import type { ScenarioFields } from '../config/config-reader.ts';
import { type BaseScenario, DEFAULT_GRACEFUL_NS } from '../config/scenarios.ts';
import { stagesDurationNs } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutorType } from './executor-type.ts';
import { VuBasedExecutor, type VuStep } from './vu-based.ts';

export interface RampingVusScenario extends BaseScenario {
  executor: 'ramping-vus';
  startVUs: number;
  stages: { durationNs: number; target: number }[];
  gracefulRampDownNs: number;
}

export const rampingVus: ExecutorType<RampingVusScenario> = {
  name: 'ramping-vus',
  parse(base: BaseScenario, fields: ScenarioFields): RampingVusScenario {
    return {
      ...base,
      executor: 'ramping-vus',
      startVUs: fields.integer('startVUs', 1, 0),
      stages: fields.stages(),
      gracefulRampDownNs: fields.duration('gracefulRampDown', DEFAULT_GRACEFUL_NS),
    };
  },
  regularDurationNs: (config) => stagesDurationNs(config.stages),
  gracefulNs: (config) => Math.max(config.gracefulStopNs, config.gracefulRampDownNs),
  plannedVUs: (config, tuple) =>
    Math.max(tuple.scale(config.startVUs), ...config.stages.map((s) => tuple.scale(s.target))),
  create(env, config, scenarioEnv) {
    const steps = rampingVuSteps(config.startVUs, config.stages).map((s) => ({
      ...s,
      vus: env.tuple.scale(s.vus),
    }));
    const plan = { steps, rampDownNs: config.gracefulRampDownNs };
    return new VuBasedExecutor(env, config, plan, stagesDurationNs(config.stages), scenarioEnv);
  },
};

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
