// The knee of a stepped study: the offered rate where served stops following, fitted to every
// step at once rather than read from the first step that fell short. Pure.
//
// A hinge through the origin, fitted by least squares over the breakpoint k:
//
//   served(x) = s·min(x, k) + t·max(x − k, 0)
//
// s is served per offered below the knee (1 when served follows exactly), t what each extra
// offered/s still gains past it (0: a plateau, below 0: a collapse). For a fixed k the model is
// linear in s and t (ordinary least squares, closed form); k is searched between each pair of
// neighbouring steps (a scan, then golden-section refinement), keeping the k of least squared
// error: segmented regression with an unknown breakpoint (Hudson, "Fitting segmented curves
// whose join points have to be estimated", JASA 61, 1966), continuous at the join and through
// the origin since nothing offered serves nothing.
import type { CurveNotFitted, KneeFit, KneeNone, KneeResult } from '../../contract/index.ts';

/** One step: the rate offered and the rate served, per s. */
export interface KneePoint {
  offeredPerSec: number;
  servedPerSec: number;
}

/** Distinct offered rates needed to fit a knee: one below it, one past it, one more to place it. */
export const KNEE_MIN_STEPS = 3;
/**
 * Distinct steps past the knee needed to fit a slope past it; with fewer it is held at 0
 * (flat). With two, the slope past and the knee's place trade off against each other: a step
 * just past the knee that served a percent short of offered reads as the start of a slope,
 * and the knee lands a step early.
 */
export const KNEE_SLOPE_PAST_STEPS = 3;
/**
 * Past a knee served gains at most this share of what it gained per offered below it; a
 * breakpoint past which served still rises faster is a bend, not the knee.
 */
export const KNEE_SLOPE_SHARE = 0.5;
/**
 * Below the knee served follows offered at least this closely (the plateau rule's default
 * following share); less, and the first steps were already past the knee.
 */
export const KNEE_FOLLOWING = 0.9;
/** Below this R² the steps scatter about the two lines too much for the knee to be a figure. */
export const KNEE_MIN_R_SQUARED = 0.95;
/**
 * A typical residual above this share of what is served at the knee makes the fit poor: a
 * step's served rate repeats within a few per cent run to run, so more is not noise.
 */
export const KNEE_MAX_RESIDUAL_SHARE = 0.05;

/** The hinge for one breakpoint: its slopes and squared error. */
interface Hinge {
  k: number;
  s: number;
  t: number;
  /** t was held at 0: one distinct step past k cannot place a slope and a knee both. */
  flat: boolean;
  sse: number;
}

/**
 * Fits the knee of served against offered: the offered rate k where served stops following,
 * what is served there (s·k), the slopes below and past it, R², the residual standard error
 * (per s; on n − 3 degrees of freedom, n − 2 with the slope past held flat) and a `poor fit:` warning naming every reason not to read the knee as a figure (the
 * first steps already short of offered, R² under {@link KNEE_MIN_R_SQUARED}, a residual above
 * {@link KNEE_MAX_RESIDUAL_SHARE} of the knee's served rate, one step below the knee). When no
 * breakpoint bends served to at most {@link KNEE_SLOPE_SHARE} of its slope below, there is no
 * knee (`none`, with the straight line's slope); nor when at the largest rate the hinge still
 * serves {@link KNEE_FOLLOWING} of the line below. Steps that are not finite, offer nothing or
 * serve less than nothing are left out; fewer than {@link KNEE_MIN_STEPS} distinct offered
 * rates are not fitted and the reason says why.
 */
export function fitKnee(input: readonly KneePoint[]): KneeResult {
  const points = input
    .filter(
      (p) =>
        Number.isFinite(p.offeredPerSec) &&
        Number.isFinite(p.servedPerSec) &&
        p.offeredPerSec > 0 &&
        p.servedPerSec >= 0,
    )
    .sort((a, b) => a.offeredPerSec - b.offeredPerSec);
  const rates = [...new Set(points.map((p) => p.offeredPerSec))];
  if (rates.length < KNEE_MIN_STEPS) {
    const count = rates.length === 0 ? 'no step' : rates.length === 1 ? 'one step' : `${rates.length} steps`;
    return notFitted(
      `${count}; a knee needs at least ${KNEE_MIN_STEPS} offered rates (one below it, one past it, one to place it)`,
    );
  }
  const slope = lineSlope(points);
  let best: Hinge | undefined;
  for (let j = 0; j + 1 < rates.length; j++) {
    const flat = rates.length - 1 - j < KNEE_SLOPE_PAST_STEPS;
    const hinge = bestInInterval(points, rates[j]!, rates[j + 1]!, flat);
    if (hinge && (!best || hinge.sse < best.sse)) best = hinge;
  }
  const fmt = (x: number) => String(Math.round(x * 100) / 100);
  if (!best || best.s <= 0) {
    return none(slope, `served did not follow offered at any step (${fmt(slope)} served per offered)`);
  }
  // Named only where the steps past it fell short: at the largest rate the hinge serves under
  // KNEE_FOLLOWING of what the line below would (as the plateau rule asks of served vs sent).
  const last = rates.at(-1)!;
  if (best.s * best.k + best.t * (last - best.k) >= KNEE_FOLLOWING * best.s * last) {
    return none(
      slope,
      slope >= KNEE_FOLLOWING
        ? `served followed offered to the last step (${fmt(slope)} served per offered)`
        : `served kept to one line to the last step, ${fmt(slope)} served per offered: no knee, though it never followed offered`,
    );
  }
  if (best.t > KNEE_SLOPE_SHARE * best.s) {
    return none(
      slope,
      `served bent but did not stop following: past ${fmt(best.k)}/s offered it still gained ${fmt(best.t)} per offered, more than half of its ${fmt(best.s)} below`,
    );
  }

  const mean = points.reduce((a, p) => a + p.servedPerSec, 0) / points.length;
  const sst = points.reduce((a, p) => a + (p.servedPerSec - mean) ** 2, 0);
  const rSquared = sst > 0 ? 1 - best.sse / sst : 1;
  const parameters = best.flat ? 2 : 3;
  const residualPerSec =
    points.length > parameters ? Math.sqrt(best.sse / (points.length - parameters)) : null;
  const servedPerSec = best.s * best.k;
  const stepsBelow = rates.filter((x) => x <= best.k).length;

  const reasons: string[] = [];
  if (best.s < KNEE_FOLLOWING)
    reasons.push(
      `served was already short of offered at the first steps (${fmt(best.s)} served per offered): the knee is at or below the first step; start the steps lower`,
    );
  if (rSquared < KNEE_MIN_R_SQUARED)
    reasons.push(`R² ${rSquared.toFixed(2)}: the steps scatter about the two lines`);
  if (residualPerSec !== null && residualPerSec > KNEE_MAX_RESIDUAL_SHARE * servedPerSec)
    reasons.push(
      `the steps lie ${fmt(residualPerSec)}/s from the lines on average (${Math.round((100 * residualPerSec) / servedPerSec)}% of the knee's served rate)`,
    );
  if (stepsBelow < 2) reasons.push('one step below the knee: the slope it follows rests on that step alone');

  const fit: KneeFit = {
    kind: 'knee',
    offeredPerSec: best.k,
    servedPerSec,
    slopeBelow: best.s,
    slopePast: best.t,
    slopePastAssumed: best.flat,
    stepsBelow,
    stepsPast: rates.length - stepsBelow,
    rSquared,
    residualPerSec,
    warning: reasons.length > 0 ? `poor fit: ${reasons.join('; ')}` : null,
  };
  return fit;
}

function notFitted(reason: string): CurveNotFitted {
  return { kind: 'not-fitted', reason };
}

function none(slope: number, reason: string): KneeNone {
  return { kind: 'none', slope, reason };
}

/** The slope of the least-squares line through the origin: Σxy ÷ Σx². */
function lineSlope(points: readonly KneePoint[]): number {
  let xy = 0;
  let xx = 0;
  for (const p of points) {
    xy += p.offeredPerSec * p.servedPerSec;
    xx += p.offeredPerSec ** 2;
  }
  return xx > 0 ? xy / xx : 0;
}

/**
 * The hinge at breakpoint k: s and t by least squares on a = min(x, k), b = max(x − k, 0)
 * (t held at 0 when `flat`: fewer than {@link KNEE_SLOPE_PAST_STEPS} steps lie past k), and its squared error. Undefined when the normal equations are
 * singular.
 */
function hingeAt(points: readonly KneePoint[], k: number, flat: boolean): Hinge | undefined {
  let aa = 0;
  let ab = 0;
  let bb = 0;
  let ay = 0;
  let by = 0;
  for (const p of points) {
    const a = Math.min(p.offeredPerSec, k);
    const b = Math.max(p.offeredPerSec - k, 0);
    aa += a * a;
    ab += a * b;
    bb += b * b;
    ay += a * p.servedPerSec;
    by += b * p.servedPerSec;
  }
  let s: number;
  let t: number;
  if (flat) {
    if (!(aa > 0)) return undefined;
    s = ay / aa;
    t = 0;
  } else {
    const det = aa * bb - ab * ab;
    if (!(Math.abs(det) > 1e-12 * aa * bb)) return undefined;
    s = (ay * bb - by * ab) / det;
    t = (aa * by - ab * ay) / det;
  }
  let sse = 0;
  for (const p of points) {
    const fitted = s * Math.min(p.offeredPerSec, k) + t * Math.max(p.offeredPerSec - k, 0);
    sse += (p.servedPerSec - fitted) ** 2;
  }
  return { k, s, t, flat, sse };
}

/** The best breakpoint in [lo, hi]: a scan of the interval, then golden-section search around the best sample. */
function bestInInterval(
  points: readonly KneePoint[],
  lo: number,
  hi: number,
  flat: boolean,
): Hinge | undefined {
  const samples = 32;
  let best: Hinge | undefined;
  let bestIndex = 0;
  for (let i = 0; i <= samples; i++) {
    const hinge = hingeAt(points, lo + ((hi - lo) * i) / samples, flat);
    if (hinge && (!best || hinge.sse < best.sse)) {
      best = hinge;
      bestIndex = i;
    }
  }
  if (!best) return undefined;
  let a = lo + ((hi - lo) * Math.max(0, bestIndex - 1)) / samples;
  let b = lo + ((hi - lo) * Math.min(samples, bestIndex + 1)) / samples;
  const ratio = (Math.sqrt(5) - 1) / 2;
  const sse = (k: number) => hingeAt(points, k, flat)?.sse ?? Number.POSITIVE_INFINITY;
  for (let i = 0; i < 60 && b - a > 1e-9 * Math.max(1, hi); i++) {
    const c = b - ratio * (b - a);
    const d = a + ratio * (b - a);
    if (sse(c) < sse(d)) b = d;
    else a = c;
  }
  const refined = hingeAt(points, (a + b) / 2, flat);
  return refined && refined.sse < best.sse ? refined : best;
}
