// Joins the client side and the server side into one row per step.
import type { RunManifest, SaturationRow, ServerStepReport, StepBucket } from '../contract/index.ts';
import { type ClientStep, type ClientSteps, totalFailures } from './client-steps.ts';

/** Seconds after the ramp tagged `drain` (scripts/lib/steps.ts DRAIN_SECONDS). */
const DRAIN_SECONDS = 5;

/** Generator health beyond which a row is not trusted as evidence about the service. */
export const GENERATOR_LIMITS = { lagMs: 100, cpuPct: 95 } as const;

/** The target rate named by a step tag: `r020` → 20, `r002.5` → 2.5; otherwise null. */
export function offeredFromTag(step: string): number | null {
  const match = /^r(\d+(?:\.\d+)?)$/.exec(step);
  return match ? Number(match[1]) : null;
}

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
  if (load) {
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
 * One row per client step, in run order. Rates are over the step's whole hold (the k6 step
 * tags' own windows). Served comes from the server's 200s when it reported the step, else
 * from the client's 2xx. Dropped iterations and generator health carry no step tag, so they
 * are attributed by time: each second to the latest step that had begun by then.
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
    const round = (x: number) => Math.round(x * 100) / 100;
    const rates = steadyRates(step, bucket, server, rampSeconds, seconds);
    return {
      step: step.key,
      offeredPerSec: offeredFromTag(step.key),
      sentPerSec: round(rates?.sent ?? step.requests / seconds),
      servedPerSec: round(rates?.served ?? (bucket ? bucket.served : step.ok2xx) / seconds),
      servedSource: bucket ? 'server' : 'client',
      seconds: rates?.seconds ?? seconds,
      requests: step.requests,
      latencyMs: { med: summary.p50, p95: summary.p95, p99: summary.p99, max: summary.max },
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
            cpuPct: bucket.process.cpuPct,
            eventLoopUtilization: bucket.process.eventLoopUtilization,
          }
        : null,
      invalid: reasons.length > 0 ? reasons.join('; ') : null,
    };
  });
}

/**
 * `--steady`: rates over a rate step's seconds after its first `rampSeconds`, from the
 * client's per-second counts and the server's per-second timeline (seconds labelled with the
 * step). Undefined when not asked for, or for drain/recovery and untagged windows.
 */
function steadyRates(
  step: ClientStep,
  bucket: StepBucket | undefined,
  server: ServerStepReport | undefined,
  rampSeconds: number,
  holdSeconds: number,
): { sent: number; served: number; seconds: number } | undefined {
  if (rampSeconds <= 0 || offeredFromTag(step.key) === null) return undefined;
  const first = Math.floor(step.firstS) + Math.ceil(rampSeconds);
  const last = Math.floor(step.firstS) + Math.max(Math.ceil(rampSeconds), Math.round(holdSeconds) - 1);
  const seconds = last - first + 1;
  let sent = 0;
  let ok = 0;
  for (let s = first; s <= last; s++) {
    sent += step.requestsBySecond.get(s) ?? 0;
    ok += step.okBySecond.get(s) ?? 0;
  }
  let served = ok;
  if (bucket && server) {
    const points = server.timeline.filter((p) => p.step === step.key).slice(Math.ceil(rampSeconds));
    if (points.length > 0)
      return {
        sent: sent / seconds,
        served: points.reduce((a, p) => a + p.served, 0) / points.length,
        seconds,
      };
    served = ok;
  }
  return { sent: sent / seconds, served: served / seconds, seconds };
}
