// Threshold sets for the scripts. Pure.

/** A k6 threshold: an expression, or one that aborts the test when crossed. */
export type Threshold = string | { threshold: string; abortOnFail: boolean; delayAbortEval?: string };

/** Service objectives a step is judged against. */
export interface Objectives {
  /** p95 latency objective, ms. */
  p95Ms: number;
  /** Failure budget, 0..1 (e.g. 0.01 = 1 %). */
  failRate: number;
}

/**
 * For each tag: `http_req_duration{step:<tag>}: p(95)<p95Ms` and
 * `http_req_failed{step:<tag>}: rate<failRate`. A sub-metric with no samples passes in k6.
 */
export function perStepThresholds(
  tags: readonly string[],
  objectives: Objectives,
): Record<string, Threshold[]> {
  const thresholds: Record<string, Threshold[]> = {};
  for (const tag of tags) {
    thresholds[`http_req_duration{step:${tag}}`] = [`p(95)<${objectives.p95Ms}`];
    thresholds[`http_req_failed{step:${tag}}`] = [`rate<${objectives.failRate}`];
  }
  return thresholds;
}

/** A row is valid only if the generator delivered the load: nothing dropped. */
export const NOTHING_DROPPED: Record<string, Threshold[]> = { dropped_iterations: ['count==0'] };
