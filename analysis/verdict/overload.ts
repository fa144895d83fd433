// What happened past the plateau: refusals, a backlog that queued, or a congestion collapse.
import type { SaturationRow, Verdict } from '../../contract/index.ts';
import { totalFailures } from '../client-steps.ts';
import { fmt } from './format.ts';
import type { VerdictInputs } from './inputs.ts';
import { afterRamp } from './recovery.ts';

/** Served past the plateau below this share of it is a collapse, not a plateau that held. */
const COLLAPSE_SHARE = 0.8;

/** The overload words of a served rate that fell past the plateau. */
function collapseWords(lowest: SaturationRow, plateauServed: number, beyond: SaturationRow[]): string {
  const timeouts = beyond.reduce((a, r) => a + r.failures.timeouts, 0);
  const queries = lowest.server?.queriesPerSec ?? null;
  const busy =
    queries !== null && queries > 2 * lowest.servedPerSec
      ? `, while the service ran ${fmt(queries)} queries/s for callers who had gone (work for nobody)`
      : '';
  return `served did not hold: it fell from ${fmt(plateauServed)}/s to ${fmt(lowest.servedPerSec)}/s at ${lowest.step}${timeouts > 0 ? `; ${timeouts} requests timed out at the client's deadline` : ''}${busy}. A congestion collapse: the queue is deeper than the deadline allows (bound it to deadline ÷ time per request, or honour deadlines)`;
}

/** `reason n, reason n` summed over rows, largest first; '' when nothing was counted. */
function countsByReason(
  rows: SaturationRow[],
  pick: (row: SaturationRow) => Record<string, number> | undefined,
): string {
  const sums = new Map<string, number>();
  for (const row of rows)
    for (const [reason, n] of Object.entries(pick(row) ?? {})) sums.set(reason, (sums.get(reason) ?? 0) + n);
  return [...sums]
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
}

function totalFailuresOf(row: SaturationRow): number {
  return totalFailures(row.failures);
}

/**
 * What became of the excess when the service queued it: how many waited when the ramp
 * ended, how long requests sent in the last step waited, how long the backlog took to
 * drain (measured, or predicted as backlog ÷ (plateau − recovery rate) when the run ended
 * first), and how many still waited when the load stopped.
 */
function backlogOf(
  inputs: VerdictInputs,
  rows: SaturationRow[],
  plateauServed: number,
  recovery: Verdict['recovery'],
): NonNullable<Verdict['backlog']> {
  const rateRows = rows.filter((r) => r.offeredPerSec !== null);
  const last = rateRows.at(-1);
  const timeline = inputs.timeline;
  const after = afterRamp(timeline);
  let queuedAtRampEnd: number | null = null;
  let queuedAtEnd: number | null = null;
  if (after.length > 0) {
    const rampEndIndex = timeline.indexOf(after[0]!);
    const lastRampSecond = timeline[rampEndIndex - 1];
    queuedAtRampEnd = lastRampSecond ? Math.round(lastRampSecond.waitingMean) : null;
    const inLoad = after.filter((p) => p.step === 'drain' || p.step === 'recovery');
    queuedAtEnd = inLoad.length > 0 ? Math.round(inLoad.at(-1)!.waitingMean) : null;
  } else if (inputs.clientInFlightAt && inputs.clientRampEndS != null) {
    // Client side only: in flight beyond what the service holds at its plateau rate.
    const base = (last?.latencyByWindowMs?.med ?? 0) / 1000;
    const excess = (atS: number) =>
      Math.max(0, Math.round(inputs.clientInFlightAt!(atS) - plateauServed * Math.min(base, 1)));
    queuedAtRampEnd = excess(inputs.clientRampEndS);
    if (inputs.clientLoadEndS != null) queuedAtEnd = excess(inputs.clientLoadEndS);
  }
  let drainSeconds = recovery.seconds;
  let drainPredicted = false;
  const recoveryRate = inputs.recoveryRatePerSec;
  if (drainSeconds === null && queuedAtRampEnd !== null && recoveryRate !== null) {
    drainPredicted = true;
    drainSeconds =
      plateauServed > recoveryRate
        ? Math.round((queuedAtRampEnd / (plateauServed - recoveryRate)) * 10) / 10
        : null;
  }
  return {
    queuedAtRampEnd,
    waitP95Ms: last ? last.latencyMs.p95 : null,
    drainSeconds,
    drainPredicted,
    queuedAtEnd,
  };
}

/** The overload line of a service that queued its excess instead of refusing it. */
function describeBacklog(
  backlog: NonNullable<Verdict['backlog']>,
  beyond: SaturationRow[],
  plateauServed: number,
  otherFailures: number,
  recoveryRate: number | null,
): string {
  const last = beyond.at(-1)!;
  const parts: string[] = [];
  parts.push(
    otherFailures === 0
      ? `zero errors because nothing was allowed to fail: past ${fmt(plateauServed)} served/s the excess queued`
      : `${otherFailures} failures (timeouts ${beyond.reduce((a, r) => a + r.failures.timeouts, 0)}) and no refusals: past ${fmt(plateauServed)} served/s the excess queued`,
  );
  if (backlog.queuedAtRampEnd !== null) parts.push(`${backlog.queuedAtRampEnd} waiting when the ramp ended`);
  if (backlog.waitP95Ms !== null)
    parts.push(`requests sent at ${last.step} took p95 ${fmt(backlog.waitP95Ms / 1000, 2)} s`);
  if (backlog.drainSeconds !== null) {
    parts.push(
      backlog.drainPredicted
        ? `predicted to drain in ~${fmt(backlog.drainSeconds)} s${recoveryRate !== null ? ` at ${recoveryRate}/s` : ''} (the run ended first)`
        : `drained in ${fmt(backlog.drainSeconds)} s${recoveryRate !== null ? ` at ${recoveryRate}/s` : ''}`,
    );
  } else if (recoveryRate === null && backlog.queuedAtRampEnd !== null) {
    parts.push('its drain time is unknown (no recovery rate to judge it at)');
  } else if (backlog.drainPredicted || backlog.queuedAtRampEnd !== null) {
    parts.push('never drains at the recovery rate (it is not below the plateau)');
  }
  if (backlog.queuedAtEnd !== null) parts.push(`${backlog.queuedAtEnd} still waiting when the load stopped`);
  return parts.join('; ');
}

/** Whether served fell past the plateau (a congestion collapse), and its words. */
export interface Collapse {
  collapsed: boolean;
  words: string;
}

/**
 * Past the plateau served must hold; when it falls below COLLAPSE_SHARE of it, the
 * clients gave up on work the service still did (a congestion collapse), and "held"
 * would be false.
 */
export function collapseOf(beyond: SaturationRow[], plateauServed: number): Collapse {
  const validBeyond = beyond.filter((r) => !r.invalid);
  const lowest = validBeyond.reduce<SaturationRow | undefined>(
    (low, r) => (!low || r.servedPerSec < low.servedPerSec ? r : low),
    undefined,
  );
  const collapsed = lowest !== undefined && lowest.servedPerSec < COLLAPSE_SHARE * plateauServed;
  return { collapsed, words: collapsed ? collapseWords(lowest, plateauServed, validBeyond) : '' };
}

/**
 * The overload line: refusals (503 + Retry-After, by reason) with the served rate held or
 * collapsed; else the backlog a service that queued built and how it drained; plus the
 * 504s of expired deadlines.
 */
export function overloadOf(
  inputs: VerdictInputs,
  beyond: SaturationRow[],
  plateauServed: number,
  collapse: Collapse,
  recovery: Verdict['recovery'],
): { overload: string; backlog: Verdict['backlog'] } {
  let overload: string;
  let backlog: Verdict['backlog'] = null;
  const shed = beyond.reduce((sum, r) => sum + r.failures.shed, 0);
  const otherFailures = beyond.reduce((sum, r) => sum + totalFailuresOf(r) - r.failures.shed, 0);
  if (shed > 0) {
    const reasons = countsByReason(beyond, (r) => r.server?.sheds);
    overload = `503 + Retry-After${reasons ? ` (${reasons})` : ''}; ${collapse.collapsed ? collapse.words : `served rate held at ${fmt(plateauServed)}/s`}`;
  } else if (collapse.collapsed) {
    backlog = backlogOf(inputs, inputs.rows, plateauServed, recovery);
    overload = `no refusals; ${collapse.words}`;
  } else {
    backlog = backlogOf(inputs, inputs.rows, plateauServed, recovery);
    overload = describeBacklog(backlog, beyond, plateauServed, otherFailures, inputs.recoveryRatePerSec);
  }
  const expired = beyond.reduce((sum, r) => sum + (r.failures.expired ?? 0), 0);
  if (expired > 0) {
    const reasons = countsByReason(beyond, (r) => r.server?.expired);
    overload += `; ${expired} answered 504 because their deadline had passed${reasons ? ` (${reasons})` : ''}: no work was done for them`;
  }
  return { overload, backlog };
}
