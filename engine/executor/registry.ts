// Every executor the engine runs, and what the rest of the engine asks of a scenario's
// executor. Adding an executor is a file of its own (see executor-type.ts) and a line here.
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import { type ConstantArrivalRateScenario, constantArrivalRate } from './constant-arrival-rate.ts';
import { type ConstantVusScenario, constantVus } from './constant-vus.ts';
import type { Executor, ExecutorEnv } from './executor.ts';
import type { ArrivalPlan, ExecutorType } from './executor-type.ts';
import { type PerVuIterationsScenario, perVuIterations } from './per-vu-iterations.ts';
import { type RampingArrivalRateScenario, rampingArrivalRate } from './ramping-arrival-rate.ts';
import { type RampingVusScenario, rampingVus } from './ramping-vus.ts';
import { type SharedIterationsScenario, sharedIterations } from './shared-iterations.ts';

export type {
  ConstantArrivalRateScenario,
  ConstantVusScenario,
  PerVuIterationsScenario,
  RampingArrivalRateScenario,
  RampingVusScenario,
  SharedIterationsScenario,
};

/** A scenario of any executor the engine runs. */
export type ScenarioConfig =
  | ConstantArrivalRateScenario
  | RampingArrivalRateScenario
  | ConstantVusScenario
  | RampingVusScenario
  | PerVuIterationsScenario
  | SharedIterationsScenario;

export type ExecutorName = ScenarioConfig['executor'];

/** An arrival-rate scenario: one whose executor plans its starts. */
export type ArrivalRateScenario = ConstantArrivalRateScenario | RampingArrivalRateScenario;

const EXECUTORS = [
  constantArrivalRate,
  rampingArrivalRate,
  constantVus,
  rampingVus,
  perVuIterations,
  sharedIterations,
] as const;

/** The executors' names, in k6's documentation order. */
export const EXECUTOR_NAMES: readonly ExecutorName[] = EXECUTORS.map((type) => type.name);

const BY_NAME = new Map<string, ExecutorType<ScenarioConfig>>(
  EXECUTORS.map((type) => [type.name, type as unknown as ExecutorType<ScenarioConfig>]),
);

/** The executor named `name`, or undefined when the engine has none of that name. */
export function executorNamed(name: unknown): ExecutorType<ScenarioConfig> | undefined {
  return typeof name === 'string' ? BY_NAME.get(name) : undefined;
}

function typeOf(config: ScenarioConfig): ExecutorType<ScenarioConfig> {
  return BY_NAME.get(config.executor)!;
}

/** A scenario's config, read by its executor; undefined (with a problem) when it names none. */
export function parseScenario(base: BaseScenario, fields: ScenarioFields): ScenarioConfig | undefined {
  const type = executorNamed(fields.fields.executor);
  if (!type) {
    fields.problem(
      'executor',
      `${JSON.stringify(fields.fields.executor)} is not an executor plateau's engine runs`,
      `use ${EXECUTOR_NAMES.slice(0, -1).join(', ')} or ${EXECUTOR_NAMES.at(-1)}`,
    );
    return undefined;
  }
  return type.parse(base, fields);
}

/** The scenario's regular duration (before gracefulStop), ns. */
export function regularDurationNs(config: ScenarioConfig): number {
  return typeOf(config).regularDurationNs(config);
}

/** The most time the scenario can take from its start: regular duration + graceful time. */
export function maxDurationNs(config: ScenarioConfig): number {
  const type = typeOf(config);
  return type.regularDurationNs(config) + (type.gracefulNs?.(config) ?? config.gracefulStopNs);
}

/** The VUs a scenario plans to use from its start: preAllocatedVUs, or its most VUs. */
export function plannedVUs(config: ScenarioConfig, tuple: ExecutionTuple): number {
  return typeOf(config).plannedVUs(config, tuple);
}

/**
 * The most VUs the scenarios plan to use at the same time, each from its startTime to the
 * end of its graceful stop: what k6 initializes before the test starts.
 */
export function maxPlannedVUs(scenarios: readonly ScenarioConfig[], tuple: ExecutionTuple): number {
  const events: { atNs: number; delta: number }[] = [];
  for (const s of scenarios) {
    const vus = plannedVUs(s, tuple);
    events.push({ atNs: s.startTimeNs, delta: vus }, { atNs: s.startTimeNs + maxDurationNs(s), delta: -vus });
  }
  // A scenario that ends when another starts hands its VUs over: ends first.
  events.sort((a, b) => a.atNs - b.atNs || a.delta - b.delta);
  let now = 0;
  let most = 0;
  for (const event of events) {
    now += event.delta;
    most = Math.max(most, now);
  }
  return most;
}

/** The executor for `env.config`; `scenarioEnv` is `__ENV` with the scenario's env merged. */
export function createExecutor(env: ExecutorEnv, scenarioEnv: Record<string, string>): Executor {
  return typeOf(env.config).create(env, env.config, scenarioEnv);
}

/** The plan of starts of an arrival-rate scenario; undefined for VU-based ones. */
export function arrivalPlan(config: ScenarioConfig): ArrivalPlan<ScenarioConfig> | undefined {
  return typeOf(config).arrivals;
}

/** Whether the scenario's executor plans its starts (the open model). */
export function isArrivalRate(config: ScenarioConfig): config is ArrivalRateScenario {
  return typeOf(config).arrivals !== undefined;
}
