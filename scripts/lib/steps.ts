// The stepped ramp as data: stages, step tags and the step at any moment. Pure.

/** A k6 ramping stage: reach `target` over `duration`. */
export interface Stage {
  duration: string;
  target: number;
}

/** Seconds after the ramp during which requests are tagged `drain`. */
export const DRAIN_SECONDS = 5;

/** The tag of requests in the first seconds after the ramp, while queues empty. */
export const DRAIN_TAG = 'drain';
/** The tag of requests at the recovery rate after the drain. */
export const RECOVERY_TAG = 'recovery';

/** A stepped capacity ramp followed by recovery. */
export interface RampPlan {
  /** Target arrival rate of each step, whole numbers strictly increasing, requests/s. */
  ratesPerSec: readonly number[];
  /** Length of each step, s. */
  holdSeconds: number;
  /** The first seconds of each hold ramp linearly from the previous rate. */
  rampSeconds: number;
  recoveryRatePerSec: number;
  /** Length of the recovery phase, s (its first second ramps down to the recovery rate). */
  recoverySeconds: number;
}

/**
 * The step tag of a target rate: `r` + the rate zero-padded to 3 digits (`r020`, `r110`);
 * wider rates keep all digits (`r1500`); a fractional rate keeps its decimals (`r002.5`).
 */
export function stepTag(ratePerSec: number): string {
  const whole = Math.trunc(ratePerSec);
  const fraction = ratePerSec - whole;
  const decimals = fraction === 0 ? '' : String(Number(fraction.toFixed(6))).slice(1);
  return `r${String(whole).padStart(3, '0')}${decimals}`;
}

/** Seconds from the start of the scenario to the end of the last step. */
export function rampEndSeconds(plan: RampPlan): number {
  return plan.ratesPerSec.length * plan.holdSeconds;
}

/** Total scenario length, ramp plus recovery, s. */
export function totalSeconds(plan: RampPlan): number {
  return rampEndSeconds(plan) + plan.recoverySeconds;
}

/**
 * The ramping-arrival-rate stages: per rate, `rampSeconds` to it then `hold − ramp` at it;
 * then 1 s down to the recovery rate and `recovery − 1` s at it.
 */
export function rampStages(plan: RampPlan, format: (seconds: number) => string): Stage[] {
  const stages: Stage[] = [];
  for (const rate of plan.ratesPerSec) {
    stages.push({ duration: format(plan.rampSeconds), target: rate });
    stages.push({ duration: format(plan.holdSeconds - plan.rampSeconds), target: rate });
  }
  stages.push({ duration: format(1), target: plan.recoveryRatePerSec });
  stages.push({ duration: format(plan.recoverySeconds - 1), target: plan.recoveryRatePerSec });
  return stages;
}

/**
 * The step tag for a request sent `elapsedSeconds` after the scenario started: step k
 * covers [k·hold, (k+1)·hold), then `drain` for 5 s, then `recovery`. Negative times
 * belong to the first step.
 */
export function stepAt(elapsedSeconds: number, plan: RampPlan): string {
  const rates = plan.ratesPerSec;
  const index = Math.floor(Math.max(0, elapsedSeconds) / plan.holdSeconds);
  if (index < rates.length) return stepTag(rates[index]!);
  return elapsedSeconds < rampEndSeconds(plan) + DRAIN_SECONDS ? DRAIN_TAG : RECOVERY_TAG;
}

/** Every tag the plan produces, in run order: the steps, `drain`, `recovery`. */
export function planTags(plan: RampPlan): string[] {
  return [...plan.ratesPerSec.map(stepTag), DRAIN_TAG, RECOVERY_TAG];
}

/** The tag of a closed-model concurrency level: `c` + VUs zero-padded to 3 digits. */
export function concurrencyTag(vus: number): string {
  return `c${String(vus).padStart(3, '0')}`;
}
