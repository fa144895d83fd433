// What an executor declares about itself: how its scenario config is read, how long it
// lasts, how many VUs it plans, how it runs, and (open-model executors) its planned starts.
import type { ScenarioFields } from '../config/config-reader.ts';
import type { BaseScenario } from '../config/scenarios.ts';
import type { PlannedStart } from '../schedule/arrival-rate-schedule.ts';
import type { ExecutionTuple } from '../schedule/execution-segment.ts';
import type { Executor, ExecutorEnv } from './executor.ts';

/** A scenario config of some executor. */
export type AnyScenario = BaseScenario & { executor: string };

/**
 * One executor (k6 registers each of its executors the same way, lib/executors.go). Every
 * executor has a file of its own under engine/executor/ that exports one of these, and
 * registry.ts lists them: the options parser, the runner (and TestInstance), the schedule printer and the
 * warm-up rehearsal find executors there.
 */
export interface ExecutorType<C extends AnyScenario> {
  readonly name: C['executor'];
  /** The executor's own fields of a scenario, read and checked; problems go to `fields`. */
  parse(base: BaseScenario, fields: ScenarioFields): C;
  /** The scenario's regular duration (before gracefulStop), ns. */
  regularDurationNs(config: C): number;
  /** Time running iterations may take past the regular end, ns (gracefulStop unless said). */
  gracefulNs?(config: C): number;
  /** The VUs it uses from its start (what k6 initializes for it before the test). */
  plannedVUs(config: C, tuple: ExecutionTuple): number;
  create(env: ExecutorEnv, config: C, scenarioEnv: Record<string, string>): Executor;
  /** Present for open-model (arrival-rate) executors: their planned starts and rates. */
  readonly arrivals?: ArrivalPlan<C>;
}

/** What an arrival-rate executor plans: starts at offsets, at rates known in advance. */
export interface ArrivalPlan<C extends AnyScenario> {
  maxVUs(config: C): number;
  /** The planned starts of this instance's share (`tuple` resegmented by maxVUs). */
  starts(config: C, tuple: ExecutionTuple): Iterable<PlannedStart>;
  /** The planned rate `atNs` after the start, iterations/s for the whole test. */
  rateAt(config: C, atNs: number): number;
  /** The highest planned rate, iterations/s for the whole test. */
  peakRate(config: C): number;
  /**
   * The same scenario at `rate`/s for `durationNs`, with `fields` replaced: an object of the
   * same shape as V8 sees it (spread from it), for the warm-up rehearsal's rounds.
   */
  atRate(config: C, fields: RehearsalFields, rate: number, durationNs: number): C;
}

/** The fields a rehearsal round sets on the scenario it rehearses. */
export interface RehearsalFields {
  name: string;
  startTimeNs: number;
  gracefulStopNs: number;
  exec: string;
  timeUnitNs: number;
  preAllocatedVUs: number;
  maxVUs: number;
}
