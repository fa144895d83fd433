// What a step tag says (scripts/lib/steps.ts writes them).

/** Seconds after the ramp tagged `drain` (scripts/lib/steps.ts DRAIN_SECONDS). */
export const DRAIN_SECONDS = 5;

/** The letters of a repeat, in order (scripts/lib/steps.ts REPEAT_LETTERS): `b` is a rate's second run. */
const REPEAT_LETTERS = 'bcdefghijklmnopqrstuvwxyz';

/**
 * A rate step's tag: `r` (a study's step) or `p` (a step of the probe that placed them), the
 * rate, and a letter when it repeats a step run before (`r040b`).
 */
const RATE_TAG = /^([rp])(\d+(?:\.\d+)?)([b-z])?$/;

/**
 * The target rate named by a step tag: `r020` → 20, `r002.5` → 2.5, a repeat `r040b` → 40,
 * a probe's step `p016` → 16; otherwise null.
 */
export function offeredFromTag(step: string): number | null {
  const match = RATE_TAG.exec(step);
  return match ? Number(match[2]) : null;
}

/** The clients named by a closed-model step tag: `c008` → 8; otherwise null. */
export function clientsFromTag(step: string): number | null {
  const match = /^c(\d+)$/.exec(step);
  return match ? Number(match[1]) : null;
}

/** The step a repeat repeats (`r040b` → `r040`); null for a tag that is not a repeat. */
export function repeatOf(step: string): string | null {
  const match = RATE_TAG.exec(step);
  return match?.[3] ? `${match[1]}${match[2]}` : null;
}

/** Whether a tag is a step of the breakpoint probe of `plateau run --find` (`p016`). */
export function isProbeTag(step: string): boolean {
  return RATE_TAG.exec(step)?.[1] === 'p';
}

/**
 * Where a rate step's tag falls in a plan of rates in run order (run.json `stepsPerSec`): the
 * first run of its rate for `r040`, the second for `r040b`, …; -1 when the plan has no such
 * run, or the tag is not a rate step's.
 */
export function planIndexOfTag(step: string, ratesPerSec: readonly number[]): number {
  const match = RATE_TAG.exec(step);
  if (!match) return -1;
  const rate = Number(match[2]);
  const run = match[3] ? REPEAT_LETTERS.indexOf(match[3]) + 2 : 1;
  let seen = 0;
  for (const [index, planned] of ratesPerSec.entries()) {
    if (planned === rate && ++seen === run) return index;
  }
  return -1;
}
