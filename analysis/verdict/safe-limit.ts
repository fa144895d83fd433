// The safe limit: the highest step, counting up from the first, that met the objectives.
import type { SaturationRow } from '../../contract/index.ts';

/**
 * The highest rate step, counting up from the first, whose p95 and failure rate met the
 * objectives with no dropped starts; undefined when the first did not.
 */
export function safeStepOf(
  rateRows: SaturationRow[],
  objectives: { p95Ms: number; failRate: number },
): SaturationRow | undefined {
  let safe: SaturationRow | undefined;
  for (const row of rateRows) {
    const ok =
      !row.invalid &&
      row.dropped === 0 &&
      row.latencyMs.p95 < objectives.p95Ms &&
      row.failureRate < objectives.failRate;
    if (!ok) break;
    safe = row;
  }
  return safe;
}
