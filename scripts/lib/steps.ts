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
  /**
   * Target arrival rate of each step in run order, requests/s: each rate above every one
   * before it, or one already run (a repeat, tagged `r040b`: {@link stepTags}).
   */
  ratesPerSec: readonly number[];
  /** `r` for a study's steps (the default), `p` for the breakpoint probe of `plateau run --find`. */
  tagPrefix?: StepPrefix;
  /** Length of each step, s. */
  holdSeconds: number;
  /** The first seconds of each hold ramp linearly from the previous rate. */
  rampSeconds: number;
  recoveryRatePerSec: number;
  /** Length of the recovery phase, s (its first second ramps down to the recovery rate). */
  recoverySeconds: number;
}

/** The first letter of a step tag: `r` a study's rate step, `p` a step of the probe that placed them. */
export type StepPrefix = 'r' | 'p';

/**
 * The letters that mark a repeat of a step run before: `r040b` is the second run of 40/s,
 * `r040c` the third (analysis/step-tags.ts reads them back).
 */
export const REPEAT_LETTERS = 'bcdefghijklmnopqrstuvwxyz';

/**
 * The step tag of a target rate: `r` + the rate zero-padded to 3 digits (`r020`, `r110`);
 * wider rates keep all digits (`r1500`); a fractional rate keeps its decimals (`r002.5`).
 * The probe's steps are `p` (`p016`).
 */
export function stepTag(ratePerSec: number, prefix: StepPrefix = 'r'): string {
  const whole = Math.trunc(ratePerSec);
  const fraction = ratePerSec - whole;
  const decimals = fraction === 0 ? '' : String(Number(fraction.toFixed(6))).slice(1);
  return `${prefix}${String(whole).padStart(3, '0')}${decimals}`;
}

/**
 * The tag of each step of `ratesPerSec`, in run order: a rate's first run is `r040`, a
 * later run of the same rate (a repeat of a decisive step) `r040b`, then `r040c`, so that
 * every step has a tag of its own and analysis can pair a repeat with its first run.
 */
export function stepTags(ratesPerSec: readonly number[], prefix: StepPrefix = 'r'): string[] {
  const runs = new Map<number, number>();
  return ratesPerSec.map((rate) => {
    const before = runs.get(rate) ?? 0;
    runs.set(rate, before + 1);
    return before === 0
      ? stepTag(rate, prefix)
      : `${stepTag(rate, prefix)}${REPEAT_LETTERS[before - 1] ?? ''}`;
  });
}

/**
 * Why a sequence of rates is not a plan of steps, or undefined when it is one: each rate is
 * above every rate before it (the ramp climbs), or repeats one already run (at most
 * {@link REPEAT_LETTERS}.length + 1 runs of a rate).
 */
export function stepSequenceProblem(ratesPerSec: readonly number[]): string | undefined {
  let top = Number.NEGATIVE_INFINITY;
  const runs = new Map<number, number>();
  for (const rate of ratesPerSec) {
    if (!(rate > 0)) return `${rate} is not a positive rate`;
    const before = runs.get(rate) ?? 0;
    if (before === 0 && rate < top)
      return `${rate} is below ${top} before it and was not run before (a lower rate can only repeat an earlier step)`;
    if (before > REPEAT_LETTERS.length) return `${rate} is run more than ${REPEAT_LETTERS.length + 1} times`;
    runs.set(rate, before + 1);
    top = Math.max(top, rate);
  }
  return undefined;
}

/** Each plan's tags, made once: `stepAt` runs for every request the script sends. */
const TAGS_OF_PLAN = new WeakMap<RampPlan, string[]>();

/** The tag of each step of `plan`, in run order (computed once per plan object). */
export function planStepTags(plan: RampPlan): string[] {
  let tags = TAGS_OF_PLAN.get(plan);
  if (!tags) {
    tags = stepTags(plan.ratesPerSec, plan.tagPrefix);
    TAGS_OF_PLAN.set(plan, tags);
  }
  return tags;
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
 * covers [k·hold, (k+1)·hold) and is tagged as {@link stepTags} says (`r040`, a repeat
 * `r040b`), then `drain` for 5 s, then `recovery`. Negative times belong to the first step.
 */
export function stepAt(elapsedSeconds: number, plan: RampPlan): string {
  const tags = planStepTags(plan);
  const index = Math.floor(Math.max(0, elapsedSeconds) / plan.holdSeconds);
  if (index < tags.length) return tags[index]!;
  return elapsedSeconds < rampEndSeconds(plan) + DRAIN_SECONDS ? DRAIN_TAG : RECOVERY_TAG;
}

/** Every tag the plan produces, in run order: the steps, `drain`, `recovery`. */
export function planTags(plan: RampPlan): string[] {
  return [...planStepTags(plan), DRAIN_TAG, RECOVERY_TAG];
}

/** The tag of a closed-model concurrency level: `c` + VUs zero-padded to 3 digits. */
export function concurrencyTag(vus: number): string {
  return `c${String(vus).padStart(3, '0')}`;
}
