// Planned start times of the arrival-rate executors, exactly as k6 computes them.
//
// Pure functions (plan, then run): given the config and the execution tuple they yield
// each iteration's start offset from the scenario start, in integer nanoseconds, and its
// global iteration number. See shared/k6-scheduling.md §1.3–1.4.
import type { ExecutionTuple } from './execution-segment.ts';

/** One planned iteration start. */
export interface PlannedStart {
  /** Offset from the executor's start, ns (float64 arithmetic, truncated like Go). */
  offsetNs: number;
  /** 0-based index of this iteration across all instances (`exec.scenario.iterationInTest`). */
  iterationInTest: number;
}

/** A ramping-arrival-rate stage: reach `target` iterations per timeUnit over `durationNs`. */
export interface RateStage {
  durationNs: number;
  target: number;
}

/**
 * ramping-arrival-rate: event i (1-based area under the rate curve) starts when the
 * integral of the rate reaches i. Within a stage that starts at T0 with cumulative count D,
 * from r0 to r1 per ns over d:
 *
 *   constant (r0 = r1):  t = T0 + (i − D) / r1
 *   ramp:                t = T0 + (r0·d − √(d·(r0²·d + 2(i − D)(r1 − r0)))) / (r0 − r1)
 *
 * so the first iteration is at 1/rate, not 0. The tuple is the one re-segmented by maxVUs.
 * Events at or after the total duration are not run (real k6's deadline always wins the
 * race for an event exactly at the end), so the schedule is end-exclusive.
 */
export function* rampingArrivalRateStarts(
  config: { startRate: number; timeUnitNs: number; stages: readonly RateStage[] },
  tuple: ExecutionTuple,
): Generator<PlannedStart> {
  const { start, gaps } = tuple.stripedOffsets();
  let gapIndex = -1;
  const next = () => gaps[++gapIndex % gaps.length]!;
  const timeUnit = config.timeUnitNs;
  let from = config.startRate / timeUnit;
  let doneSoFar = 0;
  let endCount = 0;
  let stageStart = 0;
  let i = start + 1;
  const endNs = stagesDurationNs(config.stages);
  for (const stage of config.stages) {
    const to = stage.target / timeUnit;
    const duration = stage.durationNs;
    if (from !== to) {
      endCount += duration * ((to - from) / 2 + from);
      while (i <= endCount) {
        const x =
          (from * duration -
            Math.sqrt(Math.max(0, duration * (from * from * duration + 2 * (i - doneSoFar) * (to - from))))) /
          (from - to);
        const offsetNs = stageStart + Math.trunc(x);
        if (offsetNs >= endNs) return;
        yield { offsetNs, iterationInTest: i - 1 };
        i += next();
      }
    } else {
      endCount += duration * to;
      while (i <= endCount) {
        const offsetNs = stageStart + Math.trunc((i - doneSoFar) / to);
        if (offsetNs >= endNs) return;
        yield { offsetNs, iterationInTest: i - 1 };
        i += next();
      }
    }
    doneSoFar = endCount;
    from = to;
    stageStart += duration;
  }
}

/**
 * constant-arrival-rate: one start every ⌊timeUnit / rate⌋ ns from 0, so the first
 * iteration is at t = 0. Starts stop before `durationNs` (end-exclusive). The period is not
 * scaled by the segment: each instance runs its stripe of the global sequence.
 */
export function* constantArrivalRateStarts(
  config: { rate: number; timeUnitNs: number; durationNs: number },
  tuple: ExecutionTuple,
): Generator<PlannedStart> {
  const period = Math.trunc(config.timeUnitNs / config.rate);
  const { start, gaps } = tuple.stripedOffsets();
  let global = start;
  for (let local = 0; ; local++) {
    const offsetNs = period * global;
    if (offsetNs >= config.durationNs) return;
    yield { offsetNs, iterationInTest: global };
    global += gaps[local % gaps.length]!;
  }
}

/** Sum of the stage durations, ns. */
export function stagesDurationNs(stages: readonly { durationNs: number }[]): number {
  return stages.reduce((sum, s) => sum + s.durationNs, 0);
}
