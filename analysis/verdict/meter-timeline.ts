// A server timeline from a published resource, for a service without GET /steps.
import type { ResourceSeries, SaturationRow, TimelinePoint } from '../../contract/index.ts';

/**
 * The first limit's own seconds as timeline points, so that recovery and the backlog are
 * measured on the resource that limited (its waiting callers; a queue's depth) as they are
 * on plateau's own pool. Each second is labelled with the step whose window (the client's
 * clock, the same host's as the meters') holds it. Empty when the resource has no waiting
 * figure (a CPU: nothing queues in it), or none is named.
 */
export function meterTimeline(
  resources: ResourceSeries[] | undefined,
  limitName: string | undefined,
  rows: SaturationRow[],
): TimelinePoint[] {
  const series = limitName ? resources?.find((r) => r.name === limitName) : undefined;
  if (!series || series.kind === 'cpu') return [];
  const waitingOf = (s: ResourceSeries['seconds'][number]) => (series.kind === 'queue' ? s.inUse : s.waiting);
  if (!series.seconds.some((s) => waitingOf(s) !== null)) return [];
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
    waitingMean: waitingOf(s) ?? 0,
    waitingMax: waitingOf(s) ?? 0,
    cpuPct: 0,
  }));
}
