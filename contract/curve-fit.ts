// analysis.json's fitted curves: the Universal Scalability Law on a closed-model sweep
// (analysis/fit/usl.ts) and the knee of served against offered on a stepped study
// (analysis/fit/knee.ts). Both are optional fields: analyses written before them still read.

/**
 * Gunther's Universal Scalability Law fitted to throughput per concurrency:
 * X(N) = λN / (1 + σ(N − 1) + κN(N − 1)).
 */
export interface UslFit {
  kind: 'usl';
  /** Distinct levels of concurrency the fit used (points with the same N count once here). */
  levels: number;
  /** λ: the throughput of one client alone, per s (X(1) on the fitted curve). */
  lambdaPerSec: number;
  /** σ, contention (0 ≤ σ ≤ 1): the share of the work that queues for something shared. */
  sigma: number;
  /** κ, coherency (κ ≥ 0): the cost each client adds to every other (crosstalk). */
  kappa: number;
  /**
   * N* = √((1 − σ) ÷ κ), the concurrency of peak throughput, and X(N*); null when κ = 0 (the
   * curve has no peak: it rises toward λ ÷ σ).
   */
  peak: { concurrency: number; perSec: number } | null;
  /** λ ÷ σ, the ceiling throughput approaches when κ = 0 (null with a peak, or σ = 0 too). */
  ceilingPerSec: number | null;
  /** Share of the variation in throughput the curve explains (1 − SSE ÷ SST). */
  rSquared: number;
  /** √(SSE ÷ (n − 3)), per s: the typical distance of a point from the curve (null with n ≤ 3). */
  residualPerSec: number | null;
  /** The largest level measured: a peak beyond it is extrapolated. */
  maxConcurrency: number;
  /** `poor fit: <reasons>` when σ, κ or the peak should not be read as figures; else null. */
  warning: string | null;
}

/** Too few points, or nothing to fit: why no curve was fitted. */
export interface CurveNotFitted {
  kind: 'not-fitted';
  reason: string;
}

/** The USL fit of a sweep, or why there is none. */
export type UslResult = UslFit | CurveNotFitted;

/**
 * The knee of served against offered, by a least-squares hinge through the origin:
 * served = s·min(x, k) + t·max(x − k, 0).
 */
export interface KneeFit {
  kind: 'knee';
  /** k: the offered rate, per s, where served stops following. */
  offeredPerSec: number;
  /** s·k: what the fitted line serves at the knee, per s. */
  servedPerSec: number;
  /** s: served per offered below the knee (1 when served follows exactly). */
  slopeBelow: number;
  /** t: served gained per offered past the knee (0 flat, below 0 a collapse). */
  slopePast: number;
  /** t was held at 0: too few steps lie past the knee to place a slope and the knee both. */
  slopePastAssumed: boolean;
  /** Distinct offered rates at or below the knee, and past it. */
  stepsBelow: number;
  stepsPast: number;
  rSquared: number;
  /** √(SSE ÷ (n − 3)), per s (n − 2 with the slope past held; null when nothing is left over). */
  residualPerSec: number | null;
  /** `poor fit: <reasons>` when the knee should not be read as a figure; else null. */
  warning: string | null;
}

/** No knee: served did not stop following offered within the steps (or never followed). */
export interface KneeNone {
  kind: 'none';
  /** Served per offered along the straight line through the origin that best fits every step. */
  slope: number;
  /** Why no knee is named, in words. */
  reason: string;
}

/** The knee of a stepped study, no knee, or why none was fitted. */
export type KneeResult = KneeFit | KneeNone | CurveNotFitted;
