// Where a study's steps go, pure: the probe's plan within the budget, the steps placed
// around the knee it saw (coarse below, fine across, two past), the decisive steps it
// predicts and their repeats, and the record's line saying how.
import { stepTags } from '../../scripts/lib/steps.ts';

/** The probe's first rate, /s: low enough that a service whose knee is at 8/s shows it at the third step. */
export const PROBE_START_PER_SEC = 2;
/** The probe's top rate, /s: the probe doubles until a sign, the generator's limit or this. */
export const PROBE_TOP_PER_SEC = 16_384;
/** The probe's share of the budget at most; the rest is the study's. */
export const PROBE_BUDGET_SHARE = 0.4;
/** Time the budget keeps for starting each generator and letting the service settle between them, s. */
export const STARTUP_ALLOWANCE_SECONDS = 6;
/** The shortest hold a placed step gets, s: a 1 s ramp and two seconds that count. */
export const MIN_HOLD_SECONDS = 3;
/** The longest hold a placed step gets, s: the default study's 20 s and a little more. */
export const MAX_HOLD_SECONDS = 30;
/** The smallest `--budget`, s: a probe to ~64/s and the smallest study of 3 s holds. */
export const MIN_BUDGET_SECONDS = 60;

/** The probe's plan: rates doubling from {@link PROBE_START_PER_SEC}, each held `holdSeconds`. */
export interface ProbePlan {
  ratesPerSec: number[];
  holdSeconds: number;
  rampSeconds: number;
  /** Whether the budget cut the doubling short of {@link PROBE_TOP_PER_SEC}. */
  cutByBudget: boolean;
}

/**
 * The probe for a budget of `budgetSeconds`: 3 s steps (4 s from a 3-minute budget, where
 * a knee shows more clearly over more seconds), 1 s of each a ramp from the step before,
 * doubling from 2/s for as many steps as {@link PROBE_BUDGET_SHARE} of the budget holds,
 * up to 16,384/s.
 */
export function planProbe(budgetSeconds: number): ProbePlan {
  const holdSeconds = budgetSeconds >= 180 ? 4 : 3;
  const fit = Math.max(1, Math.floor((budgetSeconds * PROBE_BUDGET_SHARE) / holdSeconds));
  const ratesPerSec: number[] = [];
  for (let rate = PROBE_START_PER_SEC; rate <= PROBE_TOP_PER_SEC; rate *= 2) ratesPerSec.push(rate);
  return {
    ratesPerSec: ratesPerSec.slice(0, fit),
    holdSeconds,
    rampSeconds: 1,
    cutByBudget: fit < ratesPerSec.length,
  };
}

/**
 * The first pass's steps as shares of the knee: coarse below, fine across, two past. The
 * fine steps straddle the two figures a verdict reads, with room for the probe's knee to be
 * a few percent off: 0.93 stays under a plateau up to 7 % lower than the probe saw (where it
 * is the safe limit's step: a step offered at or above the plateau never is), and 1.25 is past
 * the plateau rule's 1 ÷ 0.9 = 1.11 of a plateau up to 12 % higher (where served falls below
 * 90 % of sent: a CPU-bound service on the generator's machine served 8 % more in the study
 * than in the probe, whose doubled rates took the generator more of the shared cores). A step between the two would follow what was sent and still not be safe.
 */
export const LAYOUTS = {
  /** 2 coarse, 3 fine below the knee, 1 fine past it, 2 further past. */
  full: [0.3, 0.55, 0.75, 0.85, 0.93, 1.25, 1.45, 1.7],
  /** What a short budget holds: 1 coarse, 2 fine, then the same three past. */
  short: [0.5, 0.8, 0.93, 1.25, 1.45, 1.7],
} as const;

/** A placed study: its steps in run order with the repeats, and how long each runs. */
export interface PlacedSteps {
  /** The first pass, climbing. */
  firstPass: number[];
  /** The rates in run order, repeats included (run.json `stepsPerSec`). */
  sequence: number[];
  /** The decisive steps predicted: the last below the plateau and the plateau's, as rates. */
  decisive: { below: number | null; plateau: number | null };
  holdSeconds: number;
  rampSeconds: number;
  recoverySeconds: number;
  recoveryRatePerSec: number;
}

/** Why the steps could not be placed in the time left. */
export interface PlacementShortfall {
  /** Seconds the smallest layout needs, at `holdSeconds`. */
  neededSeconds: number;
  leftSeconds: number;
}

/**
 * Rates at `shares` of `kneePerSec`, whole and strictly increasing (a share that rounds onto
 * the rate before it is lifted by 1/s, so a knee at a few per second still gets its steps).
 */
export function ratesAround(kneePerSec: number, shares: readonly number[]): number[] {
  const rates: number[] = [];
  for (const share of shares) {
    const rate = Math.max(1, Math.round(kneePerSec * share));
    rates.push(rates.length > 0 && rate <= rates.at(-1)! ? rates.at(-1)! + 1 : rate);
  }
  return rates;
}

/**
 * The decisive steps predicted for a knee at `kneePerSec`: the plateau's is the first step
 * whose offered rate the knee serves less than `followingShare` of (offered × share > knee,
 * where the plateau rule will find served below sent); the one below it is the last step
 * offered under the knee, the safe limit's when it meets the objectives (a step between the
 * knee and the plateau's follows, but is never safe: safe-limit.ts).
 */
export function predictDecisive(
  firstPass: readonly number[],
  kneePerSec: number,
  followingShare: number,
): { below: number | null; plateau: number | null } {
  const index = firstPass.findIndex((rate) => rate * followingShare > kneePerSec);
  const before = index < 0 ? firstPass : firstPass.slice(0, index);
  const below = before.filter((rate) => rate < kneePerSec).at(-1) ?? null;
  return { below, plateau: index < 0 ? null : firstPass[index]! };
}

/**
 * The run order with the decisive steps repeated, never back to back with their first run:
 * the first pass up to the plateau's step, then its lowest step again (a step low enough
 * for the queue past the plateau to drain), then the step below the plateau again, then the
 * rest of the first pass, then the plateau's step again after the steps past it. Without a
 * plateau predicted, the last step is repeated after the low one.
 */
export function withRepeats(
  firstPass: readonly number[],
  decisive: { below: number | null; plateau: number | null },
): number[] {
  if (firstPass.length === 0) return [];
  const low = firstPass[0]!;
  const at = decisive.plateau === null ? firstPass.length - 1 : firstPass.indexOf(decisive.plateau);
  const sequence = firstPass.slice(0, at + 1);
  if (decisive.below !== null) {
    if (low !== decisive.below) sequence.push(low);
    sequence.push(decisive.below);
  }
  sequence.push(...firstPass.slice(at + 1));
  if (decisive.plateau !== null) sequence.push(decisive.plateau);
  return sequence;
}

/** The recovery after `holdSeconds` steps: twice a hold (the default study's 40 s after 20 s), 6 to 40 s. */
export function recoveryFor(holdSeconds: number): number {
  return Math.min(40, Math.max(6, 2 * holdSeconds));
}

/** The ramp into each step: 2 s from 10 s holds (the default study's), else 1 s. */
export function rampFor(holdSeconds: number): number {
  return holdSeconds >= 10 ? 2 : 1;
}

/**
 * Places the study around a knee at `kneePerSec` in the `leftSeconds` the budget has left:
 * the full layout (8 steps) if it fits with 3 s holds, else the short one (6), each with the
 * three repeats when `repeat`; holds as long as fit, up to 30 s (or `given.holdSeconds`).
 * The recovery rate is the second step's (about half the knee: below it, so the queue
 * drains). A shortfall when not even the short layout fits.
 */
export function placeSteps(options: {
  kneePerSec: number;
  leftSeconds: number;
  repeat: boolean;
  followingShare: number;
  given?: {
    holdSeconds?: number;
    rampSeconds?: number;
    recoverySeconds?: number;
    recoveryRatePerSec?: number;
  };
}): PlacedSteps | PlacementShortfall {
  const { kneePerSec, leftSeconds, repeat, followingShare, given = {} } = options;
  const lengthOf = (steps: number, hold: number) =>
    steps * hold + (given.recoverySeconds ?? recoveryFor(hold));
  let shortest = Number.POSITIVE_INFINITY;
  for (const shares of [LAYOUTS.full, LAYOUTS.short]) {
    const firstPass = ratesAround(kneePerSec, shares);
    const decisive = predictDecisive(firstPass, kneePerSec, followingShare);
    const sequence = repeat ? withRepeats(firstPass, decisive) : firstPass;
    const holds =
      given.holdSeconds !== undefined
        ? [given.holdSeconds]
        : Array.from({ length: MAX_HOLD_SECONDS - MIN_HOLD_SECONDS + 1 }, (_, i) => MAX_HOLD_SECONDS - i);
    const holdSeconds = holds.find((hold) => lengthOf(sequence.length, hold) <= leftSeconds);
    shortest = Math.min(shortest, lengthOf(sequence.length, holds.at(-1)!));
    if (holdSeconds === undefined) continue;
    return {
      firstPass,
      sequence,
      decisive,
      holdSeconds,
      rampSeconds: given.rampSeconds ?? rampFor(holdSeconds),
      recoverySeconds: given.recoverySeconds ?? recoveryFor(holdSeconds),
      recoveryRatePerSec: given.recoveryRatePerSec ?? firstPass[1] ?? firstPass[0]!,
    };
  }
  return { neededSeconds: shortest, leftSeconds: Math.max(0, Math.floor(leftSeconds)) };
}

/** `p002–p064`: the probe's steps that ran. */
function probeSpan(tags: readonly string[]): string {
  return tags.length > 1 ? `${tags[0]}–${tags.at(-1)}` : (tags[0] ?? 'no step');
}

/**
 * `r037b after r012b, r044b after r062`: where each repeat of a decisive step ran, from the
 * sequence (rates in run order) and the decisive rates; '' when none is repeated.
 */
export function repeatWords(
  sequence: readonly number[],
  decisive: { below: number | null; plateau: number | null },
): string {
  const tags = stepTags(sequence);
  const seen = new Set<number>();
  const words: string[] = [];
  for (const [i, rate] of sequence.entries()) {
    if (seen.has(rate) && (rate === decisive.below || rate === decisive.plateau) && i > 0)
      words.push(`${tags[i]} after ${tags[i - 1]}`);
    seen.add(rate);
  }
  return words.join(', ');
}

/**
 * The record's `steps:` line: how the study's steps were chosen, in one line, from the
 * probe's steps and why it stopped, the knee it saw, the first pass and where the repeats ran.
 */
export function findingWords(options: {
  placedBy: 'probe' | 'given';
  probeTags: readonly string[];
  probeHoldSeconds: number;
  stopWords: string;
  kneePerSec: number;
  firstPass: readonly number[];
  sequence: readonly number[];
  decisive: { below: number | null; plateau: number | null };
}): string {
  const probe = `a probe (${probeSpan(options.probeTags)}, ${options.probeHoldSeconds} s each; ${options.stopWords})`;
  const repeats = repeatWords(options.sequence, options.decisive);
  const again = repeats ? `; run again: ${repeats}` : '; no step run again';
  const knee = `${Math.round(options.kneePerSec * 10) / 10}/s`;
  return options.placedBy === 'probe'
    ? `${probe} placed ${options.firstPass.join(', ')}/s around a knee near ${knee}: coarse below, fine across, two past${again}`
    : `given (${options.firstPass.join(', ')}/s); ${probe} put the knee near ${knee}${again}`;
}
