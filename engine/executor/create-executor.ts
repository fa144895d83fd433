// Builds the executor of a scenario config, with its plan of starts.
import { regularDurationNs } from '../config/scenarios.ts';
import { constantArrivalRateStarts, rampingArrivalRateStarts } from '../schedule/arrival-rate-schedule.ts';
import { ArrivalRateExecutor } from './arrival-rate.ts';
import type { Executor, ExecutorEnv } from './executor.ts';
import { VuBasedExecutor } from './vu-based.ts';

/** The executor for `env.config`; `scenarioEnv` is `__ENV` with the scenario's env merged. */
export function createExecutor(env: ExecutorEnv, scenarioEnv: Record<string, string>): Executor {
  const config = env.config;
  const regular = regularDurationNs(config);
  switch (config.executor) {
    case 'constant-arrival-rate':
      return new ArrivalRateExecutor(
        env,
        config,
        (tuple) => constantArrivalRateStarts(config, tuple.resegmentByValue(config.maxVUs)),
        regular,
        scenarioEnv,
      );
    case 'ramping-arrival-rate':
      return new ArrivalRateExecutor(
        env,
        config,
        (tuple) => rampingArrivalRateStarts(config, tuple.resegmentByValue(config.maxVUs)),
        regular,
        scenarioEnv,
      );
    default:
      return new VuBasedExecutor(env, config, regular, scenarioEnv);
  }
}
