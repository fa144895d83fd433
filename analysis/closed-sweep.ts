// A closed-model sweep: goodput per level of clients, where it peaks, and the inversion past it.
import type { SaturationRow, SweepRow, SweepVerdict, Verdict } from '../contract/index.ts';
import { SWEEP_INVERSION_SHARE } from '../contract/index.ts';
import { clientsFromTag } from './step-tags.ts';

/** What the sweep verdict needs besides the rows. */
export interface SweepInputs {
  /** Clients during the recovery after the levels (0 or null: none). */
  recoveryVus: number | null;
  /** The client's deadline, ms (null when unknown). */
  deadlineMs: number | null;
  /**
   * The client's successes per second over [fromS, toS) on its own clock, for how long
   * goodput took to come back during the recovery.
   */
  goodputBySecond: (fromS: number, toS: number) => number[];
  /** The recovery's window on the client's clock, epoch s (null without a recovery). */
  recoveryWindowS: { fromS: number; toS: number } | null;
}

/** Pool use from which the pool counts as full at a level, %. */
const POOL_FULL_PCT = 90;
/** A process this busy (% of one core) counts as CPU-bound. */
const CPU_FULL_PCT = 85;
/** Little's Law agrees within this share. */
const LITTLE_TOLERANCE = 0.15;

/** One row per level (and the recovery) from the saturation table's rows of a sweep. */
export function sweepRows(rows: SaturationRow[], recoveryVus: number | null): SweepRow[] {
  const out: SweepRow[] = [];
  for (const row of rows) {
    const clients = row.step === 'recovery' ? recoveryVus : clientsFromTag(row.step);
    if (clients === null || clients === undefined) continue;
    const s = row.server;
    out.push({
      step: row.step,
      clients,
      seconds: row.seconds,
      attemptsPerSec: row.sentPerSec,
      goodputPerSec: row.goodputPerSec ?? (row.servedSource === 'client' ? row.servedPerSec : 0),
      completedPerSec: s?.queriesPerSec ?? null,
      expired: row.failures.expired ?? 0,
      timeouts: row.failures.timeouts,
      shed: row.failures.shed,
      retries: row.retries ?? 0,
      latencyMs: { med: row.latencyMs.med, p95: row.latencyMs.p95, mean: row.latencyMs.mean ?? null },
      okP95Ms: row.latencyOkMs?.p95 ?? null,
      inRequests: row.inFlight ? { measured: row.inFlight.mean, predicted: row.inFlight.predicted } : null,
      server: s
        ? {
            checkedOutPct: s.checkedOutPct,
            waitingMean: s.waitingMean,
            waitingMax: s.waitingMax,
            cpuPct: s.cpuPct,
          }
        : null,
    });
  }
  return out;
}

/**
 * Where goodput peaked, what was full there, the inversion past it (more clients, less
 * goodput), Little's Law on the closed loop (N = X × R), and how the recovery went.
 */
export function decideSweep(rows: SweepRow[], inputs: SweepInputs): SweepVerdict {
  const levels = rows.filter((r) => r.step !== 'recovery');
  const peakRow = levels.reduce<SweepRow | undefined>(
    (best, r) => (!best || r.goodputPerSec > best.goodputPerSec ? r : best),
    undefined,
  );
  if (!peakRow || peakRow.goodputPerSec <= 0) {
    return {
      peak: null,
      inversion: [],
      summary: levels.length === 0 ? 'no levels of clients in the run' : 'no level had any goodput',
      limit: 'unknown',
      pastPeak: 'not judged: no goodput to compare',
      littlesLaw: littlesLawLine(levels),
      recovery: recoveryOf(rows, undefined, inputs),
    };
  }
  const peakIndex = levels.indexOf(peakRow);
  const past = levels.slice(peakIndex + 1);
  const inversion = past
    .filter((r) => r.goodputPerSec < SWEEP_INVERSION_SHARE * peakRow.goodputPerSec)
    .map((r) => ({
      step: r.step,
      clients: r.clients,
      goodputPerSec: r.goodputPerSec,
      completedPerSec: r.completedPerSec,
    }));
  const deadline = inputs.deadlineMs !== null ? ` (deadline ${fmt(inputs.deadlineMs)} ms)` : '';
  const peakText = `${peakRow.clients} clients: ${fmt(peakRow.goodputPerSec)}/s within the deadline${deadline}`;
  const worst = inversion.reduce<(typeof inversion)[number] | undefined>(
    (w, r) => (!w || r.goodputPerSec < w.goodputPerSec ? r : w),
    undefined,
  );
  const summary = worst ? `${peakText}; ${worst.clients} clients: ${fmt(worst.goodputPerSec)}/s` : peakText;
  return {
    peak: {
      step: peakRow.step,
      clients: peakRow.clients,
      goodputPerSec: peakRow.goodputPerSec,
      p95Ms: peakRow.latencyMs.p95,
    },
    inversion,
    summary,
    limit: limitAt(peakRow),
    pastPeak: pastPeakLine(peakRow, past, inversion),
    littlesLaw: littlesLawLine(levels),
    recovery: recoveryOf(rows, peakRow, inputs),
  };
}

/** What was full at a level, in words. */
function limitAt(row: SweepRow): string {
  const s = row.server;
  if (!s) return 'unknown (the service reports no GET /steps)';
  const full: string[] = [];
  if ((s.checkedOutPct ?? 0) >= POOL_FULL_PCT)
    full.push(`pool ${fmt(s.checkedOutPct ?? 0, 0)}% checked out, waiting mean ${fmt(s.waitingMean)}`);
  if (s.cpuPct >= CPU_FULL_PCT) full.push(`CPU ${fmt(s.cpuPct, 0)}%`);
  if (full.length > 0) return full.join('; ');
  return `nothing on the service was full (pool ${fmt(s.checkedOutPct ?? 0, 0)}%, CPU ${fmt(s.cpuPct, 0)}%): the clients were the limit`;
}

function pastPeakLine(peak: SweepRow, past: SweepRow[], inversion: SweepVerdict['inversion']): string {
  if (past.length === 0) return `the peak is the last level: more clients were not tried`;
  if (inversion.length === 0) {
    const last = past.at(-1)!;
    return `goodput held: ${last.clients} clients still got ${fmt(last.goodputPerSec)}/s (peak ${fmt(peak.goodputPerSec)}/s)`;
  }
  const list = inversion.map((r) => `${r.clients} clients ${fmt(r.goodputPerSec)}/s`).join(', ');
  const parts = [`past it, more clients completed less: ${list}`];
  // The collapse: the service stayed busy while its callers received next to nothing.
  const worstRow = past.find((r) => r.step === inversion.at(-1)!.step)!;
  const busy =
    worstRow.completedPerSec !== null &&
    worstRow.completedPerSec >= SWEEP_INVERSION_SHARE * (peak.completedPerSec ?? peak.goodputPerSec);
  if (busy && worstRow.completedPerSec! > 2 * worstRow.goodputPerSec) {
    parts.push(
      `the service stayed busy (${fmt(worstRow.completedPerSec!)} queries/s${worstRow.server?.checkedOutPct != null ? `, pool ${fmt(worstRow.server.checkedOutPct, 0)}%` : ''}) on work for callers who had gone`,
    );
  }
  const expired = past.reduce((a, r) => a + r.expired, 0);
  const timeouts = past.reduce((a, r) => a + r.timeouts, 0);
  const retries = past.reduce((a, r) => a + r.retries, 0);
  const counts = [
    timeouts > 0 ? `${timeouts} timed out` : '',
    expired > 0 ? `${expired} expired (504)` : '',
    retries > 0 ? `${retries} retries` : '',
  ].filter(Boolean);
  if (counts.length > 0) parts.push(counts.join(', '));
  return parts.join('; ');
}

/** N = X × R per level: clients against the requests in flight and responses/s × mean latency. */
function littlesLawLine(levels: SweepRow[]): string {
  const checked = levels.filter((r) => r.inRequests?.predicted != null);
  if (checked.length === 0) return 'not checked: no level had a window with responses';
  const parts = checked.map(
    (r) => `${r.clients}: ${fmt(r.inRequests!.measured, 1)} (X × R ${fmt(r.inRequests!.predicted!, 1)})`,
  );
  const off = checked.filter((r) => {
    const { measured, predicted } = r.inRequests!;
    return Math.abs(measured - predicted!) > LITTLE_TOLERANCE * Math.max(1, measured);
  });
  const waiting = checked.filter((r) => r.clients - r.inRequests!.measured > LITTLE_TOLERANCE * r.clients);
  const verdict =
    off.length === 0
      ? 'N = X × R holds at every level'
      : `X × R disagrees with what was in flight at ${off.map((r) => r.clients).join(', ')} clients: check the client file`;
  const note =
    waiting.length > 0
      ? `; fewer requests than clients in flight at ${waiting.map((r) => r.clients).join(', ')} (clients waiting to retry)`
      : '';
  return `${verdict}: clients: in requests ${parts.join(', ')}${note}`;
}

/**
 * How goodput came back once the clients were reduced: the first second of the recovery
 * from which goodput stayed at ≥ 80 % of what that many clients got during the sweep (or
 * of the peak's per-client share when the level was not swept).
 */
function recoveryOf(
  rows: SweepRow[],
  peak: SweepRow | undefined,
  inputs: SweepInputs,
): SweepVerdict['recovery'] {
  const recovery = rows.find((r) => r.step === 'recovery');
  const clients = inputs.recoveryVus && inputs.recoveryVus > 0 ? inputs.recoveryVus : null;
  if (!recovery || clients === null) {
    return { clients, seconds: null, summary: 'not measured: the sweep had no recovery (--recovery-vus)' };
  }
  const swept = rows.find((r) => r.step !== 'recovery' && r.clients === clients);
  const reference = swept
    ? swept.goodputPerSec
    : peak
      ? (peak.goodputPerSec / peak.clients) * Math.min(clients, peak.clients)
      : 0;
  const window = inputs.recoveryWindowS;
  const perSecond = window ? inputs.goodputBySecond(window.fromS, window.toS) : [];
  const target = SWEEP_INVERSION_SHARE * reference;
  let back: number | null = null;
  for (let i = 0; i < perSecond.length; i++) {
    if (perSecond.slice(i).every((g) => g >= target)) {
      back = i;
      break;
    }
  }
  const level = swept
    ? `what ${clients} clients got in the sweep, ${fmt(reference)}/s`
    : `${fmt(reference)}/s`;
  if (reference <= 0)
    return { clients, seconds: null, summary: `at ${clients} clients: ${fmt(recovery.goodputPerSec)}/s` };
  if (back === null) {
    return {
      clients,
      seconds: null,
      summary: `at ${clients} clients goodput did not come back to 80% of ${level} within the ${fmt(recovery.seconds, 0)} s of recovery (${fmt(recovery.goodputPerSec)}/s over it)`,
    };
  }
  return {
    clients,
    seconds: back,
    summary:
      back <= 1
        ? `at ${clients} clients goodput was back within ${back} s (${fmt(recovery.goodputPerSec)}/s over the recovery; ${level})`
        : `at ${clients} clients goodput came back to 80% of ${level} after ${back} s (${fmt(recovery.goodputPerSec)}/s over the recovery): the work queued for callers who had gone was done first`,
  };
}

/** A Verdict for analysis.json's common fields: a sweep names no plateau and no safe limit. */
export function sweepAsVerdict(sweep: SweepVerdict, notes: string[]): Verdict {
  const limit = sweep.limit;
  const resource: Verdict['firstLimit']['resource'] = limit.startsWith('pool')
    ? 'pool'
    : limit.startsWith('CPU')
      ? 'cpu'
      : limit.startsWith('nothing')
        ? 'none'
        : 'unlisted';
  return {
    plateau: null,
    firstLimit: {
      resource,
      summary: sweep.peak ? `at the goodput peak (${sweep.summary}): ${limit}` : sweep.summary,
    },
    evidence: { saturated: [], flat: [] },
    littlesLaw: null,
    safeLimit: {
      ratePerSec: null,
      step: null,
      p95Ms: null,
      failureRate: null,
      jittered: false,
      fromRun: null,
    },
    overload: sweep.pastPeak,
    recovery: { seconds: sweep.recovery.seconds, summary: sweep.recovery.summary },
    database: null,
    nextLimit:
      'a closed-model sweep does not name one: run the stepped study (plateau run) for the first limit',
    notes,
  };
}

function fmt(x: number, digits = 1): string {
  const f = 10 ** digits;
  return String(Math.round(x * f) / f);
}
