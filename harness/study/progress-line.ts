// The progress line of run, confirm and check: one snapshot → the live TTY line or a plain log line.

/**
 * What a study or check reports while it runs. Rates are the last second's. Where each comes
 * from (docs/capacity-study.md, "The progress line"): offered from the plan, sent and
 * dropped from the load generator's REST API (`http_reqs`, `dropped_iterations`), served,
 * shed, p95, pool and waiting from the service's `GET /steps/live`. A figure nobody could
 * read (a target without `/steps/live`, a generator not answering yet) is left out.
 */
export interface StudyProgress {
  phase: string;
  /** A line the user must see even on a live display (printed on its own line). */
  notice?: string;
  /** The step tag (`r080`, `drain`, `recovery`; `check` for a check). */
  step?: string;
  secondsLeft?: number;
  /** The plan's target rate now, requests/s. */
  offeredPerSec?: number;
  /** Requests the generator completed in the last second (its `http_reqs`), /s. */
  sentPerSec?: number;
  /** Starts the generator dropped in the last second (its `dropped_iterations`), /s. */
  droppedPerSec?: number;
  /** Successes (2xx) the service completed in its last closed second. */
  servedPerSec?: number;
  /** Refusals (503) the service made in its last closed second. */
  shedPerSec?: number;
  /** The service's p95 handler time over its last closed second, ms (null: no responses). */
  p95Ms?: number | null;
  /** Mean connections checked out, and requests waiting for one, over that second. */
  checkedOut?: number;
  waiting?: number;
  /** The pool's size when known (the reference service's POOL_MAX). */
  poolMax?: number | null;
}

const rate = (perSec: number) => `${perSec >= 10 ? Math.round(perSec) : Math.round(perSec * 10) / 10}/s`;

function milliseconds(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return ms >= 10 ? `${Math.round(ms)} ms` : `${ms.toFixed(1)} ms`;
}

/** The figures of a load snapshot as [label, value] pairs, in the order both lines show them. */
function figures(p: StudyProgress, plain: boolean): string[] {
  const parts: string[] = [];
  if (p.offeredPerSec !== undefined) parts.push(`offered ${rate(p.offeredPerSec)}`);
  if (p.sentPerSec !== undefined) parts.push(`sent ${rate(p.sentPerSec)}`);
  if (p.servedPerSec !== undefined) parts.push(`served ${rate(p.servedPerSec)}`);
  if (p.p95Ms !== undefined) parts.push(`service p95 ${p.p95Ms === null ? '–' : milliseconds(p.p95Ms)}`);
  if (p.shedPerSec !== undefined) parts.push(`shed ${rate(p.shedPerSec)}`);
  if (p.droppedPerSec !== undefined) parts.push(`dropped ${rate(p.droppedPerSec)}`);
  if (p.checkedOut !== undefined) {
    const of = p.poolMax ? (plain ? ` of ${p.poolMax}` : `/${p.poolMax}`) : '';
    parts.push(
      plain ? `pool ${p.checkedOut.toFixed(1)}${of} checked out` : `pool ${p.checkedOut.toFixed(1)}${of}`,
    );
  }
  if (p.waiting !== undefined) parts.push(`waiting ${p.waiting.toFixed(1)}`);
  return parts;
}

const left = (p: StudyProgress) => (p.secondsLeft === undefined ? '' : `${p.secondsLeft} s left`);

/** The live line a terminal rewrites in place each second (no newline, no escape codes). */
export function ttyLine(p: StudyProgress): string {
  if (p.phase !== 'load') return `${p.phase}…`;
  const head = [p.step ? `step ${p.step}` : 'load', left(p)].filter(Boolean);
  return [...head, ...figures(p, false)].join('  ');
}

/** The line a log without a terminal gets (every 10 s, and the last of each step). */
export function plainLine(p: StudyProgress): string {
  if (p.phase !== 'load') return p.phase;
  const head = [p.step ? `step ${p.step}` : 'load', left(p)].filter(Boolean).join(', ');
  const parts = figures(p, true);
  return parts.length === 0 ? head : `${head}: ${parts.join(', ')}`;
}
