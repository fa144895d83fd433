// constant-arrival-rate: `rate` iterations per `timeUnit` for `duration`, whatever the
// target's latency (the open model).
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import { constantArrivalRateStarts } from '../schedule/arrival-rate-schedule.ts';
import { ArrivalRateExecutor, type ArrivalRateVUs, readArrivalRateVUs } from './arrival-rate.ts';
import type { ExecutorType } from './executor-type.ts';

export interface ConstantArrivalRateScenario extends BaseScenario, ArrivalRateVUs {
  executor: 'constant-arrival-rate';
  rate: number;
  timeUnitNs: number;
  durationNs: number;
}

export const constantArrivalRate: ExecutorType<ConstantArrivalRateScenario> = {
  name: 'constant-arrival-rate',
  parse(base: BaseScenario, fields: ScenarioFields): ConstantArrivalRateScenario {
    const durationNs = fields.requiredDuration();
    return {
      ...base,
      executor: 'constant-arrival-rate',
      rate: fields.integer('rate', undefined, 1),
      timeUnitNs: fields.duration('timeUnit', 1e9),
      durationNs,
      ...readArrivalRateVUs(fields),
    };
  },
  regularDurationNs: (config) => config.durationNs,
  plannedVUs: (config, tuple) => tuple.scale(config.preAllocatedVUs),
  create(env, config, scenarioEnv) {
    return new ArrivalRateExecutor(
      env,
      config,
      (tuple) => constantArrivalRateStarts(config, tuple.resegmentByValue(config.maxVUs)),
      config.durationNs,
      scenarioEnv,
    );
  },
  arrivals: {
    maxVUs: (config) => config.maxVUs,
    starts: (config, tuple) => constantArrivalRateStarts(config, tuple),
    rateAt: (config) => (config.rate * 1e9) / config.timeUnitNs,
    peakRate: (config) => (config.rate * 1e9) / config.timeUnitNs,
    atRate: (config, fields, rate, durationNs) => ({ ...config, ...fields, rate, durationNs }),
  },
};
