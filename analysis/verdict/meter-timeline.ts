// A server timeline from a published resource, for a service without GET /steps.
import type { ResourceSeries, SaturationRow, TimelinePoint } from '../../contract/index.ts';

/**
 * The first limit's own seconds as timeline points, so that recovery and the backlog are
 * measured on the resource that limited as they are on plateau's own pool. Its waiting in a
 * second is the most callers waiting at it or at any resource in front of it on the request
 * path (its waiting callers, a queue's depth): behind a full pool the excess queues in the
 * threads' queue, not at the pool (the most, not the sum: an executor's waiting tasks are its
 * queue's depth too). Each second is labelled with the step whose window (the client's clock,
 * the same host's as the meters') holds it. Empty when the resource has no waiting figure (a
 * CPU: nothing queues in it), or none is named.
 */
export function meterTimeline(
  resources: ResourceSeries[] | undefined,
  limitName: string | undefined,
  rows: SaturationRow[],
): TimelinePoint[] {
  const series = limitName ? resources?.find((r) => r.name === limitName) : undefined;
  if (!series || series.kind === 'cpu') return [];
  const waitingIn = (r: ResourceSeries, s: ResourceSeries['seconds'][number]) =>
    r.kind === 'queue' ? s.inUse : s.waiting;
  if (!series.seconds.some((s) => waitingIn(series, s) !== null)) return [];
  const inFront = (resources ?? []).filter((r) => r.kind !== 'cpu' && r.position <= series.position);
  const waitingAt = new Map<number, number>();
  for (const r of inFront)
    for (const s of r.seconds) {
      const w = waitingIn(r, s);
      if (w !== null) waitingAt.set(s.t, Math.max(waitingAt.get(s.t) ?? 0, w));
    }
  const windows = rows.filter((r) => r.window).map((r) => ({ step: r.step, ...r.window! }));
  const stepAt = (t: number) =>
    windows.find((w) => t + 0.5 >= w.startS && t + 0.5 < w.endS)?.step ??
    [...windows].reverse().find((w) => t >= w.startS)?.step ??
    null;
  return series.seconds.map((s) => ({
    t: s.t,
    step: stepAt(s.t),
    served: 0,
    shed: 0,
    checkedOutMean: s.inUse ?? 0,
    waitingMean: waitingAt.get(s.t) ?? 0,
    waitingMax: waitingAt.get(s.t) ?? 0,
    cpuPct: 0,
  }));
}
