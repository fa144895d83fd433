// The fitted curves in words, for the records: the sweep's `usl fit:` line and the stepped
// study's `knee:` line. Pure.
import type { KneeResult, UslResult, Verdict } from '../../contract/index.ts';

/** `x` rounded to `digits` decimals, as text. */
const fixed = (x: number, digits = 1) => String(Math.round(x * 10 ** digits) / 10 ** digits);
/** `x` to three significant digits (σ and κ span many orders of magnitude). */
const significant = (x: number) => String(Number(x.toPrecision(3)));

/**
 * The USL fit of a sweep in one line: `σ 0.0277 (contention), κ 0.000104 (coherency), λ 90/s
 * for one client; peak 1884/s at 96.5 clients; R² 0.99, residual 82.8/s`, then the poor-fit
 * warning when there is one; a peak past the largest level swept is marked as extrapolated,
 * and a curve without one says what it rises toward. Not fitted: why.
 */
export function uslWords(usl: UslResult, unit = 'clients'): string {
  if (usl.kind === 'not-fitted') return `not fitted: ${usl.reason}`;
  const coefficients = `σ ${significant(usl.sigma)} (contention), κ ${significant(usl.kappa)} (coherency), λ ${fixed(usl.lambdaPerSec)}/s for one client`;
  const peak = usl.peak
    ? `peak ${fixed(usl.peak.perSec)}/s at ${fixed(usl.peak.concurrency)} ${unit}${usl.peak.concurrency > usl.maxConcurrency ? ` (beyond the ${usl.maxConcurrency} swept: extrapolated)` : ''}`
    : usl.ceilingPerSec !== null
      ? `no peak (κ = 0): it rises toward λ/σ = ${fixed(usl.ceilingPerSec)}/s`
      : 'no peak (σ = κ = 0): linear over the levels swept';
  const quality = `R² ${usl.rSquared.toFixed(3)}${usl.residualPerSec !== null ? `, residual ${fixed(usl.residualPerSec)}/s` : ''}`;
  return [coefficients, peak, quality, usl.warning].filter((part) => part !== null).join('; ');
}

/**
 * The knee in one line beside the plateau the rule measured: `62.4/s offered, serving 61.8/s:
 * 0.99 served per offered below it, flat past it (assumed: one step past); measured plateau
 * 61.8/s at r070; R² 1.000, residual 0.3/s`, then the poor-fit warning when there is one. No knee
 * or not fitted: why. Null without a knee result (no rate steps).
 */
export function kneeWords(knee: KneeResult | null | undefined, plateau: Verdict['plateau']): string | null {
  if (!knee) return null;
  const measured = plateau
    ? `measured plateau ${fixed(plateau.servedPerSec)}/s at ${plateau.step}`
    : 'no plateau measured';
  if (knee.kind === 'not-fitted') return `not fitted: ${knee.reason}; ${measured}`;
  if (knee.kind === 'none') return `none: ${knee.reason}; ${measured}`;
  const past = knee.slopePastAssumed
    ? `flat past it (assumed: ${knee.stepsPast === 1 ? 'one step' : `${knee.stepsPast} steps`} past)`
    : knee.slopePast < 0
      ? `${fixed(knee.slopePast, 2)} per offered past it (served fell)`
      : `${fixed(knee.slopePast, 2)} per offered past it`;
  const quality = `R² ${knee.rSquared.toFixed(3)}${knee.residualPerSec !== null ? `, residual ${fixed(knee.residualPerSec)}/s` : ''}`;
  return [
    `${fixed(knee.offeredPerSec)}/s offered, serving ${fixed(knee.servedPerSec)}/s: ${fixed(knee.slopeBelow, 2)} served per offered below it, ${past}`,
    measured,
    quality,
    knee.warning,
  ]
    .filter((part) => part !== null)
    .join('; ');
}
