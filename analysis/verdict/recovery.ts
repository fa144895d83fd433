// Recovery: how long after the ramp the service was back at the recovery rate's own level.
import type { SaturationRow, TimelinePoint, Verdict } from '../../contract/index.ts';
import { EMPTY_QUEUE_MEAN } from './criteria.ts';
import { fmt, mean } from './format.ts';
import type { VerdictInputs } from './inputs.ts';

/** Timeline points after the ramp (drain, then recovery), oldest first. */
export function afterRamp(timeline: TimelinePoint[]): TimelinePoint[] {
  const rampEnd = timeline.findIndex((p) => p.step === 'drain' || p.step === 'recovery');
  return rampEnd < 0 ? [] : timeline.slice(rampEnd);
}

/** Seconds of the recovery phase that teach its own steady state: its last 40 %, at least 3. */
const SETTLED_SHARE = 0.4;
const SETTLED_MIN_SECONDS = 3;

/**
 * Seconds from the end of the ramp (the first second labelled drain or recovery) until the
 * wait queue is back within the band the recovery rate settles to, and (when the client
 * side is known) client p95 in that second is under the objective.
 *
 * The band is learnt from the run: the highest time-weighted waiting mean over the seconds
 * where the queue had settled at the end (settledTail), never under EMPTY_QUEUE_MEAN. At a
 * busy recovery rate requests wait for a moment now and then, so an absolute "empty" would
 * call a drained queue undrained. When those seconds are too few, or the queue still grew
 * through them, the band cannot be learnt and the record says so.
 */
export function recoveryFrom(
  inputs: VerdictInputs,
  rows: SaturationRow[],
  objectiveMs: number,
  notes: string[],
): Verdict['recovery'] {
  const timeline = inputs.timeline;
  const clientP95 = inputs.clientP95MsBySecond;
  const after = afterRamp(timeline);
  if (after.length === 0) {
    const recoveryRow = rows.find((r) => r.step === 'recovery');
    return {
      seconds: null,
      summary: recoveryRow
        ? `no server timeline; client p95 in recovery ${fmt(recoveryRow.latencyMs.p95)} ms`
        : 'not measured (no server timeline and no recovery step)',
    };
  }
  // The queue and the latency of seconds without a database say nothing about recovery.
  const downMs = after.reduce((sum, p) => sum + (p.databaseDownMs ?? 0), 0);
  if (downMs > 0)
    return {
      seconds: null,
      summary: `not judged: the database was unreachable for ${fmt(downMs / 1000, 1)} s after the ramp`,
    };
  const start = after[0]!.t;
  const gaps = after.some((p, i) => i > 0 && p.t - after[i - 1]!.t > 1);
  if (gaps)
    notes.push(
      'the server timeline has gaps after the ramp (the service restarted or stalled): recovery is approximate',
    );
  let band = EMPTY_QUEUE_MEAN;
  let bandKnown = false;
  if (after.length >= 2 * SETTLED_MIN_SECONDS) {
    const settled = settledTail(after.map((p) => p.waitingMean));
    if (settled.kind !== 'settled') {
      const trend = `waiting mean ${fmt(settled.from)} → ${fmt(settled.to)} over the last ${settled.seconds} s`;
      return {
        seconds: null,
        summary:
          settled.kind === 'growing'
            ? `not recovered: the wait queue still grew at the recovery rate (${trend})`
            : `not recovered within the run: the wait queue was still draining when it ended (${trend})`,
      };
    }
    band = Math.max(EMPTY_QUEUE_MEAN, ...settled.values);
    bandKnown = true;
  } else {
    notes.push(
      `the phase after the ramp is too short (${after.length} s) to learn the recovery rate's own queue level: recovery is judged against an empty queue (mean under ${EMPTY_QUEUE_MEAN})`,
    );
  }
  const offset = Math.round(inputs.clockOffsetS ?? 0);
  const clientKnown = clientP95 !== undefined && clientP95.size > 0;
  const clear = after.find(
    (p) => p.waitingMean <= band && (!clientKnown || (clientP95.get(p.t - offset) ?? 0) < objectiveMs),
  );
  if (!clear) {
    return {
      seconds: null,
      summary: clientKnown
        ? 'the wait queue or client p95 never recovered within the run'
        : 'the wait queue never emptied within the run',
    };
  }
  const seconds = clear.t - start;
  const bandText = bandKnown
    ? `back to the recovery rate's own level (waiting ≤ ${fmt(band, 2)})`
    : 'queue empty';
  return {
    seconds,
    summary: `${bandText}${clientKnown ? ` and p95 under ${objectiveMs} ms` : ''} within ${seconds} s of the end of the ramp`,
  };
}

type Settled =
  | { kind: 'settled'; values: number[] }
  | { kind: 'growing' | 'draining'; from: number; to: number; seconds: number };

/**
 * The seconds at the end of a run where the waiting count has settled: the last 40 % of
 * them, halved while their first half still waits clearly more than their second (more
 * than half a request and a fifth of the level: the backlog was still draining), down to
 * 3 s. A tail that rises is `growing`; one still falling at 3 s is `draining`.
 */
function settledTail(waiting: number[]): Settled {
  let k = Math.max(SETTLED_MIN_SECONDS, Math.ceil(waiting.length * SETTLED_SHARE));
  for (;;) {
    const tail = waiting.slice(-k);
    const half = Math.floor(tail.length / 2);
    const early = mean(tail.slice(0, half));
    const late = mean(tail.slice(half));
    // Flat: the halves differ by at most half a request or a fifth of the level.
    const tolerance = Math.max(0.5, 0.2 * Math.max(early, late));
    if (late - early > tolerance && late > 1) return { kind: 'growing', from: early, to: late, seconds: k };
    if (early - late <= tolerance) return { kind: 'settled', values: tail };
    if (k <= SETTLED_MIN_SECONDS) return { kind: 'draining', from: early, to: late, seconds: k };
    k = Math.max(SETTLED_MIN_SECONDS, Math.ceil(k / 2));
  }
}
