// ramping-arrival-rate: the arrival rate follows `stages` from `startRate`, linearly within
// each (the open model; plateau's stepped studies are one of these).
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import { rampingArrivalRateStarts, stagesDurationNs } from '../schedule/arrival-rate-schedule.ts';
import { ArrivalRateExecutor, type ArrivalRateVUs, readArrivalRateVUs } from './arrival-rate.ts';
import type { ExecutorType } from './executor-type.ts';

export interface RampingArrivalRateScenario extends BaseScenario, ArrivalRateVUs {
  executor: 'ramping-arrival-rate';
  startRate: number;
  timeUnitNs: number;
  stages: { durationNs: number; target: number }[];
}

/** The planned rate per timeUnit `atNs` after the start: through the stages, linearly within each. */
function rateAtNs(config: RampingArrivalRateScenario, atNs: number): number {
  let from = config.startRate;
  let stageStart = 0;
  for (const stage of config.stages) {
    if (stageStart + stage.durationNs > atNs) {
      const into = (atNs - stageStart) / stage.durationNs;
      return from + (stage.target - from) * into;
    }
    from = stage.target;
    stageStart += stage.durationNs;
  }
  return from;
}

export const rampingArrivalRate: ExecutorType<RampingArrivalRateScenario> = {
  name: 'ramping-arrival-rate',
  parse(base: BaseScenario, fields: ScenarioFields): RampingArrivalRateScenario {
    return {
      ...base,
      executor: 'ramping-arrival-rate',
      startRate: fields.integer('startRate', 0, 0),
      timeUnitNs: fields.duration('timeUnit', 1e9),
      stages: fields.stages(),
      ...readArrivalRateVUs(fields),
    };
  },
  regularDurationNs: (config) => stagesDurationNs(config.stages),
  plannedVUs: (config, tuple) => tuple.scale(config.preAllocatedVUs),
  create(env, config, scenarioEnv) {
    return new ArrivalRateExecutor(
      env,
      config,
      (tuple) => rampingArrivalRateStarts(config, tuple.resegmentByValue(config.maxVUs)),
      stagesDurationNs(config.stages),
      scenarioEnv,
    );
  },
  arrivals: {
    maxVUs: (config) => config.maxVUs,
    starts: (config, tuple) => rampingArrivalRateStarts(config, tuple),
    rateAt: (config, atNs) => (rateAtNs(config, atNs) * 1e9) / config.timeUnitNs,
    peakRate: (config) =>
      (Math.max(config.startRate, ...config.stages.map((s) => s.target)) * 1e9) / config.timeUnitNs,
    atRate(config, fields, rate, durationNs) {
      const stage = { ...config.stages[0]!, durationNs, target: rate };
      return { ...config, ...fields, startRate: rate, stages: [stage] };
    },
  },
};
