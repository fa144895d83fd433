// Scenario configs: the discriminated union of the executors plateau's engine runs.

/** Fields every executor has (k6 lib/executor/base_config.go). */
interface BaseScenario {
  name: string;
  /** Delay from the end of setup, ns. */
  startTimeNs: number;
  /** Time running iterations get after the scenario's regular end, ns (default 30 s). */
  gracefulStopNs: number;
  /** Exported function to run per iteration (default `default`). */
  exec: string;
  /** Merged over `__ENV` for this scenario's iterations. */
  env: Record<string, string>;
  /** Added to every sample of this scenario's iterations. */
  tags: Record<string, string>;
}

export interface ConstantArrivalRateScenario extends BaseScenario {
  executor: 'constant-arrival-rate';
  rate: number;
  timeUnitNs: number;
  durationNs: number;
  preAllocatedVUs: number;
  maxVUs: number;
}

export interface RampingArrivalRateScenario extends BaseScenario {
  executor: 'ramping-arrival-rate';
  startRate: number;
  timeUnitNs: number;
  stages: { durationNs: number; target: number }[];
  preAllocatedVUs: number;
  maxVUs: number;
}

export interface ConstantVusScenario extends BaseScenario {
  executor: 'constant-vus';
  vus: number;
  durationNs: number;
}

export interface RampingVusScenario extends BaseScenario {
  executor: 'ramping-vus';
  startVUs: number;
  stages: { durationNs: number; target: number }[];
  gracefulRampDownNs: number;
}

export interface PerVuIterationsScenario extends BaseScenario {
  executor: 'per-vu-iterations';
  vus: number;
  iterations: number;
  maxDurationNs: number;
}

export interface SharedIterationsScenario extends BaseScenario {
  executor: 'shared-iterations';
  vus: number;
  iterations: number;
  maxDurationNs: number;
}

export type ScenarioConfig =
  | ConstantArrivalRateScenario
  | RampingArrivalRateScenario
  | ConstantVusScenario
  | RampingVusScenario
  | PerVuIterationsScenario
  | SharedIterationsScenario;

export type ExecutorName = ScenarioConfig['executor'];

export const EXECUTOR_NAMES = [
  'constant-arrival-rate',
  'ramping-arrival-rate',
  'constant-vus',
  'ramping-vus',
  'per-vu-iterations',
  'shared-iterations',
] as const satisfies readonly ExecutorName[];

/** The scenario's regular duration (before gracefulStop), ns. */
export function regularDurationNs(s: ScenarioConfig): number {
  switch (s.executor) {
    case 'constant-arrival-rate':
    case 'constant-vus':
      return s.durationNs;
    case 'ramping-arrival-rate':
    case 'ramping-vus':
      return s.stages.reduce((sum, stage) => sum + stage.durationNs, 0);
    case 'per-vu-iterations':
    case 'shared-iterations':
      return s.maxDurationNs;
  }
}

/** The most time the scenario can take from its start: regular duration + graceful time. */
export function maxDurationNs(s: ScenarioConfig): number {
  const graceful =
    s.executor === 'ramping-vus' ? Math.max(s.gracefulStopNs, s.gracefulRampDownNs) : s.gracefulStopNs;
  return regularDurationNs(s) + graceful;
}
