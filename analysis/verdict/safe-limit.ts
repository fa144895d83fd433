// The safe limit: the highest step below the plateau, counting up from the first, that met the objectives.
import type { SaturationRow } from '../../contract/index.ts';

/**
 * The highest rate step, counting up from the first, whose p95 and failure rate met the
 * objectives with no dropped starts, and which is below the plateau: before the plateau's
 * step and offered under the served rate the plateau held. A step at or above the plateau
 * may pass the objectives for the length of one hold (its queue had not filled yet, or its
 * p95 stayed under the objective while requests waited), but any burst there queues: it is
 * never quoted as safe. Undefined when the first step did not qualify.
 */
export function safeStepOf(
  rateRows: SaturationRow[],
  objectives: { p95Ms: number; failRate: number },
  plateau: { index: number; servedPerSec: number } | null = null,
): SaturationRow | undefined {
  let safe: SaturationRow | undefined;
  for (const [index, row] of rateRows.entries()) {
    const ok =
      !row.invalid &&
      row.dropped === 0 &&
      row.latencyMs.p95 < objectives.p95Ms &&
      row.failureRate < objectives.failRate;
    if (!ok) break;
    if (plateau && (index >= plateau.index || (row.offeredPerSec ?? 0) >= plateau.servedPerSec)) break;
    safe = row;
  }
  return safe;
}

/**
 * The step that met the objectives but was left out for being at or above the plateau
 * (the next one after the safe step), for the record to say why the safe limit is lower.
 */
export function passedAtPlateau(
  rateRows: SaturationRow[],
  objectives: { p95Ms: number; failRate: number },
  safe: SaturationRow | undefined,
): SaturationRow | undefined {
  const next = rateRows[safe ? rateRows.indexOf(safe) + 1 : 0];
  if (!next) return undefined;
  const ok =
    !next.invalid &&
    next.dropped === 0 &&
    next.latencyMs.p95 < objectives.p95Ms &&
    next.failureRate < objectives.failRate;
  return ok ? next : undefined;
}
