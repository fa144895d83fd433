// Joins the client side and the server side into one row per step.
import type {
  ClientLatency,
  LatencySummary,
  RunManifest,
  SaturationRow,
  ServerStepReport,
  StepBucket,
} from '../contract/index.ts';
import { type ClientStep, type ClientSteps, totalFailures } from './client-steps.ts';
import { databaseOutageReason } from './database-outage.ts';
import { clientsFromTag, DRAIN_SECONDS, offeredFromTag } from './step-tags.ts';

/** Generator health beyond which a row is not trusted as evidence about the service. */
export const GENERATOR_LIMITS = { lagMs: 100, cpuPct: 95 } as const;

export { DRAIN_SECONDS, offeredFromTag } from './step-tags.ts';

/**
 * How long a step lasted, s: from the manifest's plan when known; else the spacing to the
 * next step's first sample (steps follow each other); else the span of its own samples.
 */
function stepSeconds(
  step: ClientStep,
  next: ClientStep | undefined,
  manifest: RunManifest | undefined,
): number {
  const load = manifest?.load;
  if (load?.model === 'closed') {
    // A closed-model sweep: levels of clients held holdSeconds, then a recovery with no drain.
    if (clientsFromTag(step.key) !== null) return load.holdSeconds;
    if (step.key === 'recovery') return load.recoverySeconds;
  } else if (load) {
    if (offeredFromTag(step.key) !== null) return load.holdSeconds;
    if (step.key === 'drain') return Math.min(DRAIN_SECONDS, load.recoverySeconds);
    if (step.key === 'recovery') return Math.max(1, load.recoverySeconds - DRAIN_SECONDS);
  }
  if (next && offeredFromTag(step.key) !== null) return Math.max(1, Math.round(next.firstS - step.firstS));
  // CSV timestamps are whole seconds: a step seen from t to t+k lasted about k+1 s.
  return Math.max(1, Math.round(step.lastS - step.firstS) + 1);
}

/** Sums `series` over the seconds in [from, to]. */
function sumOver(series: Map<number, number>, from: number, to: number, pick: 'sum' | 'max'): number | null {
  let result: number | null = null;
  for (const [second, value] of series) {
    if (second < Math.floor(from) || second > Math.floor(to)) continue;
    result = result === null ? value : pick === 'sum' ? result + value : Math.max(result, value);
  }
  return result;
}

/**
 * One row per client step, in run order. *Sent* counts the requests tagged with the step
 * (when they were sent); *served* counts what completed during the step's window: the
 * server's 200s while the step was current when it reports them (`window`, schema 2), else
 * its per-second timeline's seconds labelled with the step, else the client's 2xx stamped
 * in the window. Dropped iterations and generator health carry no step tag, so they are
 * attributed by time: each second to the latest step that had begun by then.
 */
export function buildSaturationTable(
  client: ClientSteps,
  server: ServerStepReport | undefined,
  manifest: RunManifest | undefined,
  options: { steady?: boolean } = {},
): SaturationRow[] {
  const rampSeconds = options.steady ? (manifest?.load.rampSeconds ?? 0) : 0;
  const buckets = new Map<string, StepBucket>((server?.steps ?? []).map((b) => [b.step, b]));
  const steps = client.steps;
  return steps.map((step, i) => {
    const next = steps[i + 1];
    const seconds = stepSeconds(step, next, manifest);
    // The step owns the seconds from its first sample up to the next step's first.
    const until = next ? next.firstS - 1 : step.lastS;
    const bucket = buckets.get(step.key);
    const summary = step.latency.summary();
    const failures = totalFailures(step.failures);
    const dropped = sumOver(client.droppedBySecond, step.firstS, until, 'sum') ?? 0;
    const lag = sumOver(client.lagMsBySecond, step.firstS, until, 'max');
    const cpu = sumOver(client.cpuPctBySecond, step.firstS, until, 'max');
    const reasons: string[] = [];
    if (dropped > 0) reasons.push(`the generator dropped ${dropped} iterations`);
    if (lag !== null && lag > GENERATOR_LIMITS.lagMs)
      reasons.push(`generator event-loop lag reached ${lag} ms`);
    if (cpu !== null && cpu >= GENERATOR_LIMITS.cpuPct) reasons.push(`generator CPU reached ${cpu}%`);
    // What a step served while the database was away says nothing about capacity.
    const databaseDownMs = bucket?.databaseDownMs ?? 0;
    if (databaseDownMs > 0)
      reasons.push(databaseOutageReason(databaseDownMs, bucket?.unavailable?.database ?? 0));
    const served = servedRate(step, bucket, server, client, rampSeconds, seconds);
    const window = step.window;
    const windowLatency = window && window.latency.count > 0 ? window.latency : null;
    const inFlight = window
      ? {
          mean: window.inFlightMean,
          atEnd: window.inFlightAtEnd,
          predicted:
            windowLatency && window.endS > window.startS
              ? round((window.answered / (window.endS - window.startS)) * ((windowLatency.mean ?? 0) / 1000))
              : null,
        }
      : null;
    const checkedOutMean = bucket ? bucket.pool.checkedOutMean : undefined;
    const queryMean = bucket?.queryMs.mean ?? null;
    return {
      step: step.key,
      offeredPerSec: offeredFromTag(step.key),
      sentPerSec: round(served.sent ?? step.requests / seconds),
      servedPerSec: round(served.perSec),
      servedSource: served.source,
      servedBasis: served.basis,
      completedByTagPerSec: round((bucket ? bucket.served : step.ok2xx) / seconds),
      goodputPerSec:
        window && window.endS > window.startS ? round(window.ok2xx / (window.endS - window.startS)) : null,
      retries: step.retries,
      seconds: served.seconds ?? seconds,
      requests: step.requests,
      latencyMs: latencyOf(summary),
      latencyOkMs: step.okLatency.count > 0 ? latencyOf(step.okLatency.summary()) : null,
      latencyByWindowMs: windowLatency ? latencyOf(windowLatency) : null,
      inFlight,
      window: window ? { startS: round(window.startS, 3), endS: round(window.endS, 3) } : null,
      failures: step.failures,
      failureRate: step.requests > 0 ? Math.round((failures / step.requests) * 10000) / 10000 : 0,
      dropped,
      generator: { lagMsMax: lag, cpuPctMax: cpu },
      server: bucket
        ? {
            checkedOutPct: bucket.pool.checkedOutPct,
            waitingMean: bucket.pool.waitingMean,
            waitingMax: bucket.pool.waitingMax,
            waitP95Ms: bucket.waitMs.p95,
            queryP95Ms: bucket.queryMs.p95,
            queryMeanMs: queryMean,
            databaseP95Ms: bucket.databaseMs?.p95 ?? null,
            loopDelayP95Ms: bucket.process.loopDelayMs?.p95 ?? null,
            checkedOutMean,
            // L = λ × W on the pool: λ is the queries it ran (served or not, for callers
            // who had gone too) when the service counts them, else what it served.
            checkedOutPredicted:
              queryMean === null
                ? null
                : bucket.window?.queries !== undefined && bucket.window.ms >= 1000
                  ? round((bucket.window.queries / (bucket.window.ms / 1000)) * (queryMean / 1000))
                  : bucket.window?.servedPerSec != null
                    ? round(bucket.window.servedPerSec * (queryMean / 1000))
                    : null,
            cpuPct: bucket.process.cpuPct,
            eventLoopUtilization: bucket.process.eventLoopUtilization,
            sheds: { ...bucket.sheds },
            ...(bucket.expired ? { expired: { ...bucket.expired } as Record<string, number> } : {}),
            ...(bucket.saturated !== undefined ? { saturated: bucket.saturated } : {}),
            ...(bucket.unavailable
              ? { unavailable: { ...bucket.unavailable } as Record<string, number> }
              : {}),
            ...(bucket.databaseDownMs !== undefined ? { databaseDownMs: bucket.databaseDownMs } : {}),
            queriesPerSec:
              bucket.window?.queries !== undefined && bucket.window.ms >= 1000
                ? round(bucket.window.queries / (bucket.window.ms / 1000))
                : null,
          }
        : null,
      invalid: reasons.length > 0 ? reasons.join('; ') : null,
    };
  });
}

function round(x: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function latencyOf(summary: LatencySummary): ClientLatency {
  return {
    med: summary.p50,
    p95: summary.p95,
    p99: summary.p99,
    max: summary.max,
    ...(summary.mean !== undefined ? { mean: summary.mean } : {}),
  };
}

interface ServedRate {
  perSec: number;
  source: 'server' | 'client';
  basis: 'window' | 'tag';
  /** Sent per second over the same seconds, when those are not the whole hold (--steady). */
  sent?: number;
  seconds?: number;
}

/**
 * A step's served rate by window, from the best source there is: the server's own window
 * counts, its timeline, the client's completions; by tag only when no window exists.
 * `rampSeconds` > 0 (`--steady`) leaves a rate step's first seconds out.
 */
function servedRate(
  step: ClientStep,
  bucket: StepBucket | undefined,
  server: ServerStepReport | undefined,
  client: ClientSteps,
  rampSeconds: number,
  holdSeconds: number,
): ServedRate {
  const steady = rampSeconds > 0 && offeredFromTag(step.key) !== null;
  const points = server ? server.timeline.filter((p) => p.step === step.key) : [];
  const window = step.window;
  let sent: number | undefined;
  let seconds: number | undefined;
  if (steady && window && window.endS - window.startS > rampSeconds) {
    // The steady part of the step's window, by send time: exact with millisecond stamps.
    const from = window.startS + rampSeconds;
    seconds = round(window.endS - from);
    sent = client.series.window(from, window.endS).sent / (window.endS - from);
  } else if (steady) {
    // No window: whole seconds from the step's first request.
    const first = Math.floor(step.firstS) + Math.ceil(rampSeconds);
    const last = Math.floor(step.firstS) + Math.max(Math.ceil(rampSeconds), Math.round(holdSeconds) - 1);
    seconds = last - first + 1;
    let count = 0;
    for (let s = first; s <= last; s++) count += step.requestsBySecond.get(s) ?? 0;
    sent = count / seconds;
  }
  const result = (perSec: number, source: 'server' | 'client', basis: 'window' | 'tag'): ServedRate => ({
    perSec,
    source,
    basis,
    ...(sent !== undefined ? { sent, seconds } : {}),
  });
  if (bucket && steady && points.length > Math.ceil(rampSeconds)) {
    const kept = points.slice(Math.ceil(rampSeconds));
    return result(kept.reduce((a, p) => a + p.served, 0) / kept.length, 'server', 'window');
  }
  if (bucket?.window?.servedPerSec != null) return result(bucket.window.servedPerSec, 'server', 'window');
  if (bucket && points.length > 0) {
    // Schema 1: the seconds labelled with the step, over the time it was current (a label
    // names the step current when the second closed, so the count of labels can be one off).
    const currentS = bucket.pool.currentMs / 1000;
    const servedInLabels = points.reduce((a, p) => a + p.served, 0);
    return result(servedInLabels / (currentS >= 1 ? currentS : points.length), 'server', 'window');
  }
  if (window && window.endS > window.startS) {
    const from = steady ? window.startS + rampSeconds : window.startS;
    const counts = steady ? client.series.window(from, window.endS) : window;
    return result(counts.ok2xx / Math.max(0.001, window.endS - from), 'client', 'window');
  }
  return result((bucket ? bucket.served : step.ok2xx) / holdSeconds, bucket ? 'server' : 'client', 'tag');
}
