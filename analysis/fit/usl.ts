// Gunther's Universal Scalability Law fitted to throughput per concurrency: a closed-model
// sweep's goodput per level of clients. Pure.
//
//   X(N) = λN / (1 + σ(N − 1) + κN(N − 1))
//
// σ (contention) is the share of the work that waits its turn for something shared: alone it
// bends the curve toward Amdahl's ceiling λ/σ. κ (coherency) is what each client costs every
// other (crosstalk, keeping shared state consistent): it grows with N², and makes throughput
// fall past N* = √((1 − σ)/κ). Neil J. Gunther, Guerrilla Capacity Planning (Springer, 2007),
// ch. 4–5.
//
// The fit is ordinary least squares on X itself (as the R package `usl` fits it, with nls's
// "port" or nlsr's nlxb): a bounded Levenberg–Marquardt on (λ, σ, κ) with the analytic
// Jacobian, started from the best of Gunther's own regression (below) and a coarse grid
// over (σ, κ) with λ solved exactly for each. No npm library is used: ml-levenberg-marquardt
// differentiates numerically with one absolute step (0.1 by default) and damps with the
// identity, which suits neither κ ≈ 1e-4 beside λ ≈ 90 nor the bounds σ, κ ≥ 0.
import type { CurveNotFitted, SweepRow, UslFit, UslResult } from '../../contract/index.ts';

/** One measured level: N (clients, threads, processors) and its throughput, per s. */
export interface UslPoint {
  concurrency: number;
  perSec: number;
}

/** The law's three coefficients. */
export interface UslCoefficients {
  /** Throughput of one client alone, per s. */
  lambdaPerSec: number;
  sigma: number;
  kappa: number;
}

/** At least this many distinct levels to fit three coefficients at all. */
export const USL_MIN_LEVELS = 3;
/**
 * Below this many distinct levels the fit is warned: three coefficients on four levels leave
 * one degree of freedom, and almost any rising-then-bending curve then fits with R² near 1
 * (the R package `usl` warns below six).
 */
export const USL_TRUSTED_LEVELS = 5;
/**
 * Below this R² the law explains too little of how throughput moved with N for σ, κ or the
 * peak to be read as figures (Gunther's published fits are above 0.95)...
 */
export const USL_MIN_R_SQUARED = 0.9;
/**
 * ...unless the points lie within this share of the mean throughput of the curve: a sweep
 * whose goodput barely moved (a pool full from the first level) has little variation for R²
 * to explain, and a residual this small is what a level's goodput differs by run to run.
 */
export const USL_NOISE_SHARE = 0.05;
/**
 * A coefficient held at its bound (σ or κ at 0, σ at 1) makes the fit poor when freeing it
 * would fit better by more than this share of the variation in throughput (rounding aside):
 * the figure is then the bound, not an estimate. Exactly linear scaling fits σ = κ = 0 with
 * nothing to gain, and is not poor.
 */
export const USL_BOUND_COST = 1e-6;

/** Why a coefficient held at its bound means the law's shape does not fit. */
const HELD_WORDS = {
  sigmaAtZero:
    'σ held at 0 (σ < 0 would fit better: throughput grew faster than linearly at first, or rose straight and then flattened sharply)',
  sigmaAtOne: 'σ held at 1 (throughput fell from the first level on: N was not what limited it)',
  kappaAtZero:
    'κ held at 0 (κ < 0 would fit better: throughput still climbed at the largest levels, faster than a levelling-off curve allows; sweep more clients for a peak)',
} as const;

/** A sweep's levels as points: clients against goodput per s (the recovery is not a level). */
export function sweepUslPoints(rows: readonly SweepRow[]): UslPoint[] {
  return rows
    .filter((r) => r.step !== 'recovery')
    .map((r) => ({ concurrency: r.clients, perSec: r.goodputPerSec }));
}

/** X(N) for the given coefficients, per s. */
export function uslThroughput(n: number, c: UslCoefficients): number {
  return (c.lambdaPerSec * n) / (1 + c.sigma * (n - 1) + c.kappa * n * (n - 1));
}

/**
 * Gunther's linear method (Guerrilla Capacity Planning §5.5, "regression through the origin"):
 * with the relative capacity C(N) = X(N) ÷ X(1), the deviation from linear scaling is
 * N/C − 1 = σ(N − 1) + κN(N − 1), which in x = N − 1 is the quadratic κx² + (σ + κ)x with no
 * intercept: ordinary least squares on it gives σ and κ. It needs X(1) (a point at N = 1;
 * several are averaged); without one it returns null. The errors it minimises are those of
 * N/C, not of X, so it weighs the levels differently from {@link fitUsl} and its
 * coefficients differ (the `usl` package's 1.x default). Points are not checked: give finite
 * N ≥ 1 and X > 0.
 */
export function uslRegression(points: readonly UslPoint[]): UslCoefficients | null {
  const ones = points.filter((p) => p.concurrency === 1);
  if (ones.length === 0) return null;
  const lambda = ones.reduce((a, p) => a + p.perSec, 0) / ones.length;
  if (!(lambda > 0)) return null;
  // Normal equations of y = a·x² + b·x (no intercept).
  let s4 = 0;
  let s3 = 0;
  let s2 = 0;
  let sy2 = 0;
  let sy1 = 0;
  for (const p of points) {
    if (!(p.perSec > 0)) continue;
    const x = p.concurrency - 1;
    const y = p.concurrency / (p.perSec / lambda) - 1;
    s4 += x ** 4;
    s3 += x ** 3;
    s2 += x ** 2;
    sy2 += y * x ** 2;
    sy1 += y * x;
  }
  const det = s4 * s2 - s3 * s3;
  if (!(Math.abs(det) > 0)) return null;
  const a = (sy2 * s2 - s3 * sy1) / det;
  const b = (s4 * sy1 - s3 * sy2) / det;
  return { lambdaPerSec: lambda, sigma: b - a, kappa: a };
}

/**
 * Fits the USL to the points by least squares on throughput, with σ in [0, 1], κ ≥ 0 and
 * λ ≥ 0, and judges the fit: R², the residual standard error (per s, on n − 3 degrees of
 * freedom), the peak N* = √((1 − σ)/κ) with X(N*) (none when κ = 0: the curve then rises
 * toward λ/σ), and a `poor fit:` warning naming every reason not to read the figures (fewer
 * than {@link USL_TRUSTED_LEVELS} levels, R² under {@link USL_MIN_R_SQUARED} with the points
 * further than {@link USL_NOISE_SHARE} of the mean from the curve, a coefficient held at a
 * bound that binds). Points that are not finite, with N ≤ 0 or X < 0, are left out; with
 * fewer than {@link USL_MIN_LEVELS} distinct levels left, or no throughput at any, nothing is
 * fitted and the reason says why.
 */
export function fitUsl(input: readonly UslPoint[]): UslResult {
  const points = input.filter(
    (p) => Number.isFinite(p.concurrency) && Number.isFinite(p.perSec) && p.concurrency > 0 && p.perSec >= 0,
  );
  const levels = new Set(points.map((p) => p.concurrency)).size;
  if (levels < USL_MIN_LEVELS) {
    return notFitted(
      `${levels === 0 ? 'no level' : levels === 1 ? 'one level' : `${levels} levels`} of concurrency; its three coefficients need at least ${USL_MIN_LEVELS} (${USL_TRUSTED_LEVELS} or more to judge the fit)`,
    );
  }
  if (points.every((p) => p.perSec === 0)) return notFitted('no throughput at any level');

  const fit = leastSquares(points);
  const { lambdaPerSec: lambda, sigma, kappa } = fit;
  const mean = points.reduce((a, p) => a + p.perSec, 0) / points.length;
  const sst = points.reduce((a, p) => a + (p.perSec - mean) ** 2, 0);
  const sse = sumOfSquares(points, fit);
  const rSquared = sst > 0 ? 1 - sse / sst : sse === 0 ? 1 : 0;
  const maxConcurrency = Math.max(...points.map((p) => p.concurrency));
  const peakN = kappa > 0 ? Math.max(1, Math.sqrt((1 - sigma) / kappa)) : null;

  const reasons: string[] = [];
  if (levels < USL_TRUSTED_LEVELS)
    reasons.push(
      `only ${levels} levels for three coefficients (${USL_TRUSTED_LEVELS} or more leave enough to judge the fit)`,
    );
  const residualPerSec = points.length > 3 ? Math.sqrt(sse / (points.length - 3)) : null;
  if (rSquared < USL_MIN_R_SQUARED && !(residualPerSec !== null && residualPerSec <= USL_NOISE_SHARE * mean))
    reasons.push(`R² ${rSquared.toFixed(2)}: the law explains little of how throughput moved with N`);
  // A coefficient held at its bound matters when freeing it alone would fit better.
  for (const bound of heldAtBounds(fit)) {
    if (boundCost(points, fit, sse, bound) > USL_BOUND_COST * sst) reasons.push(HELD_WORDS[bound]);
  }

  const fitted: UslFit = {
    kind: 'usl',
    levels,
    lambdaPerSec: lambda,
    sigma,
    kappa,
    peak: peakN === null ? null : { concurrency: peakN, perSec: uslThroughput(peakN, fit) },
    ceilingPerSec: peakN === null && sigma > 0 ? lambda / sigma : null,
    rSquared,
    residualPerSec,
    maxConcurrency,
    warning: reasons.length > 0 ? `poor fit: ${reasons.join('; ')}` : null,
  };
  return fitted;
}

type Bound = keyof typeof HELD_WORDS;

/** The bounds the fit is held at. */
function heldAtBounds(c: UslCoefficients): Bound[] {
  const held: Bound[] = [];
  if (c.sigma <= 0) held.push('sigmaAtZero');
  if (c.sigma >= 1) held.push('sigmaAtOne');
  if (c.kappa <= 0) held.push('kappaAtZero');
  return held;
}

/**
 * What one bound costs: SSE of the bounded fit less that of a fit with that bound lifted
 * (σ or κ may go below 0, or σ above 1), as long as 1 + σ(N − 1) + κN(N − 1) stays positive
 * at every level.
 */
function boundCost(points: readonly UslPoint[], fit: UslCoefficients, sse: number, bound: Bound): number {
  const lower: [number, number, number] = [...LOWER];
  const upper: [number, number, number] = [...UPPER];
  if (bound === 'sigmaAtZero') lower[1] = -1;
  if (bound === 'sigmaAtOne') upper[1] = 10;
  if (bound === 'kappaAtZero') lower[2] = -1;
  const free = levenbergMarquardt(points, fit, lower, upper);
  return Math.max(0, sse - sumOfSquares(points, free));
}

function notFitted(reason: string): CurveNotFitted {
  return { kind: 'not-fitted', reason };
}

/** Σ (X − X(N))²; infinite where the denominator is not positive (outside the law). */
function sumOfSquares(points: readonly UslPoint[], c: UslCoefficients): number {
  let sse = 0;
  for (const p of points) {
    const n = p.concurrency;
    if (1 + c.sigma * (n - 1) + c.kappa * n * (n - 1) <= 0) return Number.POSITIVE_INFINITY;
    sse += (p.perSec - uslThroughput(n, c)) ** 2;
  }
  return sse;
}

/**
 * For fixed σ and κ, X(N) = λ·g(N) with g = N/(1 + σ(N − 1) + κN(N − 1)) is linear in λ:
 * the best λ is Σ X·g ÷ Σ g² (never below 0 when every X ≥ 0).
 */
function bestLambda(points: readonly UslPoint[], sigma: number, kappa: number): number {
  let xg = 0;
  let gg = 0;
  for (const p of points) {
    const n = p.concurrency;
    const g = n / (1 + sigma * (n - 1) + kappa * n * (n - 1));
    xg += p.perSec * g;
    gg += g * g;
  }
  return gg > 0 ? xg / gg : 0;
}

/** The bounded least-squares fit: the best start, then Levenberg–Marquardt from it. */
function leastSquares(points: readonly UslPoint[]): UslCoefficients {
  const maxN = Math.max(...points.map((p) => p.concurrency));
  const starts: UslCoefficients[] = [];
  const regression = uslRegression(points);
  if (regression) {
    const sigma = clamp(regression.sigma, 0, 1);
    const kappa = Math.max(0, regression.kappa);
    starts.push({ lambdaPerSec: bestLambda(points, sigma, kappa), sigma, kappa });
  }
  // κ·N² is what matters at the largest level: the grid scales κ to it.
  for (const sigma of [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.6, 0.9, 1]) {
    for (const kn2 of [0, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3, 1, 3, 10, 100]) {
      const kappa = kn2 / (maxN * maxN);
      starts.push({ lambdaPerSec: bestLambda(points, sigma, kappa), sigma, kappa });
    }
  }
  const ranked = starts
    .map((c) => ({ c, sse: sumOfSquares(points, c) }))
    .sort((a, b) => a.sse - b.sse)
    .slice(0, 3);
  let best = ranked[0]!;
  for (const start of ranked) {
    const c = levenbergMarquardt(points, start.c);
    const sse = sumOfSquares(points, c);
    if (sse < best.sse) best = { c, sse };
  }
  return best.c;
}

type Bounds = readonly [number, number, number];
const LOWER: Bounds = [0, 0, 0];
const UPPER: Bounds = [Number.POSITIVE_INFINITY, 1, Number.POSITIVE_INFINITY];

/**
 * Levenberg–Marquardt with Marquardt's scaling (the damping is μ·diag(JᵀJ), so λ ≈ 100 and
 * κ ≈ 1e-4 are damped alike) and bounds kept by projection: a coefficient at a bound that
 * the gradient pushes outward is held there (an active set) and the step is solved for the
 * others. Parameters are [λ, σ, κ]; a step that leaves the law's domain (a denominator ≤ 0)
 * counts as no better.
 */
function levenbergMarquardt(
  points: readonly UslPoint[],
  start: UslCoefficients,
  lower: Bounds = LOWER,
  upper: Bounds = UPPER,
): UslCoefficients {
  let p = [start.lambdaPerSec, start.sigma, start.kappa];
  const asCoefficients = (q: number[]): UslCoefficients => ({
    lambdaPerSec: q[0]!,
    sigma: q[1]!,
    kappa: q[2]!,
  });
  let sse = sumOfSquares(points, asCoefficients(p));
  let mu = 1e-3;
  for (let iteration = 0; iteration < 500 && mu < 1e16; iteration++) {
    // JᵀJ and Jᵀr with the analytic partial derivatives of X(N).
    const a = [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ];
    const g = [0, 0, 0];
    for (const point of points) {
      const n = point.concurrency;
      const d = 1 + p[1]! * (n - 1) + p[2]! * n * (n - 1);
      const x = (p[0]! * n) / d;
      const j = [n / d, (-x * (n - 1)) / d, (-x * n * (n - 1)) / d];
      const r = point.perSec - x;
      for (let i = 0; i < 3; i++) {
        g[i]! += j[i]! * r;
        for (let k = 0; k < 3; k++) a[i]![k]! += j[i]! * j[k]!;
      }
    }
    // Held: at a bound with the descent direction (+g) pointing out of the box.
    const free = [0, 1, 2].filter(
      (i) => !((p[i]! <= lower[i]! && g[i]! <= 0) || (p[i]! >= upper[i]! && g[i]! >= 0)),
    );
    if (free.length === 0) break;
    const step = solve(
      free.map((i) => free.map((k) => a[i]![k]! + (i === k ? mu * Math.max(a[i]![i]!, 1e-300) : 0))),
      free.map((i) => g[i]!),
    );
    if (!step) {
      mu *= 10;
      continue;
    }
    const next = [...p];
    free.forEach((i, k) => {
      next[i] = clamp(p[i]! + step[k]!, lower[i]!, upper[i]!);
    });
    const nextSse = sumOfSquares(points, asCoefficients(next));
    if (nextSse < sse) {
      const moved = free.some((i) => Math.abs(next[i]! - p[i]!) > 1e-12 * Math.max(Math.abs(p[i]!), 1e-300));
      const gain = sse - nextSse;
      p = next;
      sse = nextSse;
      mu = Math.max(mu / 10, 1e-15);
      if (!moved || gain <= 1e-15 * sse) break;
    } else {
      mu *= 10;
    }
  }
  return asCoefficients(p);
}

/** Solves the small linear system m·x = b by Gaussian elimination with partial pivoting (null when singular). */
function solve(m: number[][], b: number[]): number[] | null {
  const n = b.length;
  const rows = m.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(rows[r]![col]!) > Math.abs(rows[pivot]![col]!)) pivot = r;
    if (!(Math.abs(rows[pivot]![col]!) > 0)) return null;
    [rows[col], rows[pivot]] = [rows[pivot]!, rows[col]!];
    for (let r = col + 1; r < n; r++) {
      const f = rows[r]![col]! / rows[col]![col]!;
      for (let c = col; c <= n; c++) rows[r]![c]! -= f * rows[col]![c]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = rows[r]![n]!;
    for (let c = r + 1; c < n; c++) s -= rows[r]![c]! * x[c]!;
    x[r] = s / rows[r]![r]!;
  }
  return x;
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
