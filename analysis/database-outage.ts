// A database outage during a run: which rows it spoils, and what the record says about it.
import type { SaturationRow, TimelinePoint } from '../contract/index.ts';

/** Time the database was unreachable while the row's step was current, ms (0 when not reported). */
export function databaseDownMsOf(row: SaturationRow): number {
  return row.server?.databaseDownMs ?? 0;
}

/**
 * Whether the service found its database unreachable during the row's step. Such a row is
 * not evidence about capacity: what it served was decided by the outage, so no plateau, no
 * limit and no safe limit is read from it (a plateau caused by an outage is not a capacity
 * finding).
 */
export function isDatabaseOutageRow(row: SaturationRow): boolean {
  return databaseDownMsOf(row) > 0;
}

/**
 * Why a step the database was away for is not evidence, for the row's `invalid`:
 * `the database was unreachable for 4.2 s of this step (87 requests answered 503)`.
 */
export function databaseOutageReason(downMs: number, refused: number): string {
  return `the database was unreachable for ${seconds(downMs)} of this step${refused > 0 ? ` (${refused} requests answered 503, reason database)` : ''}`;
}

/** One outage as the service's per-second timeline shows it. */
export interface DatabaseOutage {
  /** The second it began in, epoch s (server clock). */
  startS: number;
  /** How long the database was unreachable, ms (the seconds' own figures, summed). */
  downMs: number;
  /** Requests answered 503 for want of it in those seconds. */
  refused: number;
  /** The steps current during it, in order. */
  steps: string[];
  /** Still unreachable through the whole of the timeline's last second. */
  ongoing: boolean;
}

/**
 * The outages in a timeline: each run of consecutive seconds with `databaseDownMs` above 0.
 * A timeline from a service that does not watch its database has none.
 */
export function databaseOutagesOf(timeline: TimelinePoint[]): DatabaseOutage[] {
  const outages: DatabaseOutage[] = [];
  let open: DatabaseOutage | undefined;
  let lastT: number | undefined;
  for (const point of timeline) {
    const down = point.databaseDownMs ?? 0;
    const contiguous = lastT !== undefined && point.t === lastT + 1;
    lastT = point.t;
    if (down <= 0) {
      open = undefined;
      continue;
    }
    if (!open || !contiguous) {
      open = { startS: point.t, downMs: 0, refused: 0, steps: [], ongoing: false };
      outages.push(open);
    }
    open.downMs += down;
    open.refused += point.unavailable ?? 0;
    if (point.step !== null && !open.steps.includes(point.step)) open.steps.push(point.step);
  }
  // Away through the whole of the timeline's last second: it had not come back. (An outage
  // that began within that second cannot be told from one that ended in it.)
  const last = timeline.at(-1);
  if (open && last && (last.databaseDownMs ?? 0) >= 999) open.ongoing = true;
  return outages;
}

/**
 * The record's notes on the database's outages: when (server clock, UTC, and how long after
 * the timeline began), for how long, during which steps, how many requests it cost, and
 * that the rows it touched are not evidence. From the timeline when it shows them, else from
 * the rows (a timeline that was cut, or a service that reports steps only).
 */
export function databaseOutageNotes(timeline: TimelinePoint[], rows: SaturationRow[]): string[] {
  const spoiled = rows.filter(isDatabaseOutageRow).map((r) => r.step);
  const rowsWords =
    spoiled.length > 0
      ? `: ${spoiled.join(', ')} ${spoiled.length === 1 ? 'is' : 'are'} not evidence, and no limit is named from ${spoiled.length === 1 ? 'it' : 'them'}`
      : '';
  const outages = databaseOutagesOf(timeline);
  if (outages.length > 0) {
    const firstS = timeline[0]!.t;
    return outages.map((o) => {
      const when = `${new Date(o.startS * 1000).toISOString().slice(11, 19)} UTC (${o.startS - firstS} s into the run)`;
      const during = o.steps.length > 0 ? `, during ${o.steps.join(', ')}` : '';
      const refused = o.refused > 0 ? `; ${o.refused} requests were answered 503 (reason database)` : '';
      const length = o.ongoing
        ? `for ${seconds(o.downMs)} and was still away when the run ended`
        : `for ${seconds(o.downMs)}`;
      return `the database was unreachable from ${when} ${length}${during}${refused}${rowsWords}`;
    });
  }
  if (spoiled.length === 0) return [];
  const downMs = rows.reduce((sum, r) => sum + databaseDownMsOf(r), 0);
  const refused = rows.reduce((sum, r) => sum + (r.server?.unavailable?.database ?? 0), 0);
  return [
    `the database was unreachable for ${seconds(downMs)} in all${refused > 0 ? `; ${refused} requests were answered 503 (reason database)` : ''}${rowsWords}`,
  ];
}

/** `4.2 s`, or `350 ms` under a second. */
function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${Math.round(ms)} ms`;
}
