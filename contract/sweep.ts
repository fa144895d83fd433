// analysis.json's closed-model part: one row per level of clients, and what it shows.
import type { UslResult } from './curve-fit.ts';

/** One level of a closed-model sweep (or its recovery). */
export interface SweepRow {
  /** `c008`, or `recovery`. */
  step: string;
  /** Concurrent clients at this level. */
  clients: number;
  /** Seconds of the level's window the rates are over. */
  seconds: number;
  /** Requests sent per second, retries included (by step tag: when they were sent). */
  attemptsPerSec: number;
  /**
   * Successes the clients received per second in the level's window: within their deadline,
   * since a client stops waiting at its timeout.
   */
  goodputPerSec: number;
  /**
   * Queries the service completed per second in the level's window, whether or not their
   * caller still waited (null when the service does not report it).
   */
  completedPerSec: number | null;
  /** 504s: the service gave up on a request whose deadline had passed. */
  expired: number;
  /** The client gave up (its timeout, the deadline). */
  timeouts: number;
  /** 503s (refused with Retry-After). */
  shed: number;
  /** Attempts that were retries. */
  retries: number;
  /** Latency of the level's requests, ms (timeouts count at the deadline). */
  latencyMs: { med: number; p95: number; mean: number | null };
  /** p95 of the successes alone, ms: what an admitted request took (null without any). */
  okP95Ms: number | null;
  /**
   * Little's Law on the closed loop: requests in flight measured on the client, and
   * responses/s × mean latency (X × R). With no think time N = X × R; clients waiting to
   * retry are the difference.
   */
  inRequests: { measured: number; predicted: number | null } | null;
  server: {
    checkedOutPct: number | null;
    waitingMean: number;
    waitingMax: number;
    cpuPct: number;
  } | null;
}

/** What a closed-model sweep shows. */
export interface SweepVerdict {
  /** The level where goodput peaked. */
  peak: { step: string; clients: number; goodputPerSec: number; p95Ms: number } | null;
  /** Levels past the peak whose goodput fell below {@link SWEEP_INVERSION_SHARE} of it. */
  inversion: { step: string; clients: number; goodputPerSec: number; completedPerSec: number | null }[];
  /** The peak and the inversion in one line, e.g. "8 clients: 25.0/s within the deadline; 20 clients: 0.1/s". */
  summary: string;
  /** What was full at the peak. */
  limit: string;
  /** Past the peak, in words: the inversion, or that goodput held. */
  pastPeak: string;
  /** N = X × R at each level. */
  littlesLaw: string;
  recovery: { clients: number | null; seconds: number | null; summary: string };
  /**
   * The Universal Scalability Law fitted to goodput per level (analysis/fit/usl.ts): σ, κ, the
   * concurrency of peak goodput and the peak, with the fit's quality (absent in analyses
   * written before it).
   */
  usl?: UslResult;
}

/** Goodput below this share of the peak counts as fallen (an inversion). */
export const SWEEP_INVERSION_SHARE = 0.8;
