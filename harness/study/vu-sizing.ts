// How many VUs a study gives the generator, so that it delivers every planned start.

import { offeredFromTag } from '../../analysis/step-tags.ts';
import type { AnalysisResult, VuSizing } from '../../contract/index.ts';
import type { ServiceConfig } from '../../target-service/config.ts';

/** What sizing needs to know of a study. */
export interface SizingInputs {
  ratesPerSec: readonly number[];
  holdSeconds: number;
  recoveryRatePerSec: number;
  jitterSeconds: number;
  /** The client's timeout (deadline) per request, s. */
  timeoutSeconds: number;
  /** The reference service's settings, or undefined for a user's own target. */
  service: ServiceConfig | undefined;
}

/** Head-room over the estimate of requests in flight. */
const MARGIN = 1.3;
/** VUs added to every estimate, for the moments when arrivals bunch. */
const SPARE_VUS = 10;
/** A latency to plan with when nothing is known of the target, s. */
const UNKNOWN_LATENCY_SECONDS = 1;
/** The most VUs a study pre-allocates on its own (real k6: a JavaScript runtime of a few MB each). */
export const MAX_PLANNED_VUS = 10_000;

/**
 * Requests in flight ≈ arrival rate × time each one takes (Little's Law), and an iteration
 * that first sleeps up to `jitter` s holds its VU that long too. A service that refuses its
 * excess bounds the time by its acquire timeout; one that queues it holds every request
 * past its ceiling, so the backlog Σ (rate − ceiling) × hold is in flight by the end of the
 * ramp. The ceiling is predicted from the pool (connections ÷ hold time per request), with
 * the hold time padded by 40 %: a connection is held past its query while the releasing
 * request renders its statement before the next waiter runs (Little's Law note in the
 * record), and a lower predicted ceiling only errs towards more VUs. A user's own target
 * is planned at 1 s per request; if that proves short, the study reruns (resizeAfterDrops).
 */
export function planVus(inputs: SizingInputs): VuSizing {
  const top = Math.max(...inputs.ratesPerSec, inputs.recoveryRatePerSec);
  const jitter = inputs.jitterSeconds;
  const s = inputs.service;
  let inFlight: number;
  let basis: string;
  if (s?.shed) {
    const latency = (s.acquireTimeoutMs + s.queryMs + 50) / 1000;
    inFlight = top * (latency + jitter) + s.poolMax + s.queueMax;
    basis = `top rate ${top}/s × (acquire timeout + query + 50 ms = ${round(latency)} s${jitter > 0 ? ` + jitter ${jitter} s` : ''}) + pool and queue`;
  } else if (s) {
    const ceiling = s.poolMax / ((s.queryMs * 1.4 + 5) / 1000);
    const backlog = inputs.ratesPerSec.reduce(
      (sum, rate) => sum + Math.max(0, rate - ceiling) * inputs.holdSeconds,
      0,
    );
    inFlight = backlog + top * (0.1 + jitter);
    basis = `queueing service: predicted ceiling ${round(ceiling)}/s, backlog by the end of the ramp ${Math.round(backlog)}, plus top rate ${top}/s × ${round(0.1 + jitter)} s`;
  } else {
    inFlight = top * (UNKNOWN_LATENCY_SECONDS + jitter);
    basis = `top rate ${top}/s × ${UNKNOWN_LATENCY_SECONDS + jitter} s (your own target: 1 s per request assumed${jitter > 0 ? ', plus jitter' : ''})`;
  }
  return sized(inFlight, top, inputs, basis);
}

/**
 * After a run that dropped starts with a healthy generator: VUs for the load the service
 * really got. The plateau it measured gives the backlog that full delivery would have
 * built, Σ (offered − plateau) × hold, plus top rate × (median latency + jitter); at least
 * twice as many VUs as before. Undefined when nothing was dropped, when the generator
 * itself could not keep up (more VUs would not help), or when the last sizing was the cap.
 */
export function resizeAfterDrops(
  previous: VuSizing,
  analysis: AnalysisResult,
  inputs: SizingInputs,
): VuSizing | undefined {
  const rows = analysis.table.filter(
    (r) => offeredFromTag(r.step) !== null || r.step === 'drain' || r.step === 'recovery',
  );
  const dropped = rows.reduce((sum, r) => sum + r.dropped, 0);
  if (dropped === 0 || analysis.verdict.firstLimit.resource === 'generator') return undefined;
  if (previous.preAllocatedVUs >= MAX_PLANNED_VUS) return undefined;
  const top = Math.max(...inputs.ratesPerSec, inputs.recoveryRatePerSec);
  const servedBest = Math.max(0, ...rows.filter((r) => r.offeredPerSec !== null).map((r) => r.servedPerSec));
  const ceiling = analysis.verdict.plateau?.servedPerSec ?? servedBest;
  const backlog = analysis.verdict.plateau
    ? inputs.ratesPerSec.reduce((sum, rate) => sum + Math.max(0, rate - ceiling) * inputs.holdSeconds, 0)
    : 0;
  const medianS = Math.max(0.05, ...rows.map((r) => r.latencyMs.med / 1000));
  const inFlight = Math.max(
    backlog + top * (Math.min(medianS, inputs.timeoutSeconds) + inputs.jitterSeconds),
    (previous.preAllocatedVUs * 2) / MARGIN,
  );
  const droppedAt = rows.filter((r) => r.dropped > 0).map((r) => `${r.step} ${r.dropped}`);
  return sized(
    inFlight,
    top,
    inputs,
    `rerun after drops (${droppedAt.join(', ')}) with ${previous.preAllocatedVUs} VUs: measured ceiling ${round(ceiling)}/s, backlog ${Math.round(backlog)}, plus top rate × (median ${round(medianS)} s${inputs.jitterSeconds > 0 ? ' + jitter' : ''})`,
  );
}

function sized(inFlight: number, top: number, inputs: SizingInputs, basis: string): VuSizing {
  const preAllocatedVUs = Math.min(MAX_PLANNED_VUS, Math.ceil(inFlight * MARGIN) + SPARE_VUS);
  // Every VU busy for a whole timeout is the most that can ever be in flight.
  const ceiling = Math.ceil(top * (inputs.timeoutSeconds + inputs.jitterSeconds)) + SPARE_VUS;
  const maxVUs = Math.max(
    preAllocatedVUs,
    Math.min(Math.max(2 * preAllocatedVUs, 1500), ceiling, MAX_PLANNED_VUS),
  );
  return { preAllocatedVUs, maxVUs, basis };
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
