// Little's Law, L = λ × W: the pool's ceiling from its hold time, and each step's check.
import type { SaturationRow, Verdict } from '../../contract/index.ts';
import { fmt } from './format.ts';
import type { PlateauFound } from './plateau.ts';

/**
 * Little's Law per step, L = λ × W: on the pool (mean checked out against served × mean
 * query time) and on the client (mean in flight against completed × mean latency, both
 * over the step's window). It holds in steady state only; a step whose backlog grew by
 * more than a quarter during its window is marked unsteady and not judged.
 */
export function littlesLawChecksOf(rows: SaturationRow[]): NonNullable<Verdict['littlesLawChecks']> {
  const checks: NonNullable<Verdict['littlesLawChecks']> = [];
  let previousAtEnd: number | null = null;
  for (const row of rows) {
    const inFlight = row.inFlight;
    if (
      row.offeredPerSec !== null &&
      row.server?.checkedOutMean !== undefined &&
      row.server.checkedOutPredicted != null
    ) {
      const measured = row.server.checkedOutMean;
      const predicted = row.server.checkedOutPredicted;
      checks.push({
        step: row.step,
        where: 'pool',
        measured,
        predicted,
        steady: true,
        agrees: agrees(measured, predicted),
      });
    }
    if (row.offeredPerSec !== null && inFlight && inFlight.predicted !== null) {
      const start = previousAtEnd ?? 0;
      const steady = Math.abs(inFlight.atEnd - start) <= 0.25 * Math.max(inFlight.mean, 4);
      checks.push({
        step: row.step,
        where: 'client',
        measured: inFlight.mean,
        predicted: inFlight.predicted,
        steady,
        agrees: agrees(inFlight.mean, inFlight.predicted),
      });
    }
    previousAtEnd = inFlight?.atEnd ?? null;
  }
  return checks;
}

/** Within 25 %, or within half a request when both are small. */
function agrees(measured: number, predicted: number): boolean {
  return Math.abs(measured - predicted) <= Math.max(0.5, 0.25 * Math.max(measured, predicted));
}

/**
 * Little's Law on the pool of plateau's own service: its hold time per request below the
 * knee (mean checked out ÷ served) predicts its ceiling (pool max ÷ hold time); at the
 * plateau, a full queue of queueMax predicts the wait. A disagreement over 25 % (or a wait
 * off by half and 20 ms) is named: the instrumentation or something between release and
 * the next waiter.
 */
export function poolLittlesLaw(
  found: PlateauFound,
  poolMax: number,
  queueMax: number | null,
  poolIsLimit: boolean,
  collapsed: boolean,
): NonNullable<Verdict['littlesLaw']> | null {
  const { knee, row: plateauRow, servedPerSec: plateauServed } = found;
  if (!plateauRow.server) return null;
  const kneeServer = knee?.server;
  const holdBelow =
    kneeServer?.checkedOutPct != null && knee!.servedPerSec > 0
      ? ((kneeServer.checkedOutPct / 100) * poolMax) / knee!.servedPerSec
      : null;
  const predictedCeiling = holdBelow ? poolMax / holdBelow : null;
  const holdAtPlateau = plateauServed > 0 ? poolMax / plateauServed : null;
  const predictedWait =
    holdAtPlateau !== null && queueMax !== null ? ((queueMax * holdAtPlateau) / poolMax) * 1000 : null;
  const measuredWait = plateauRow.server.waitP95Ms;
  let disagreement: string | null = null;
  if (
    poolIsLimit &&
    predictedCeiling !== null &&
    Math.abs(predictedCeiling - plateauServed) > 0.25 * plateauServed
  ) {
    disagreement = collapsed
      ? `predicted ceiling ${fmt(predictedCeiling)}/s vs measured plateau ${fmt(plateauServed)}/s: the pool kept working near its ceiling, but the callers gave up on much of that work (see overload)`
      : `predicted ceiling ${fmt(predictedCeiling)}/s vs measured plateau ${fmt(plateauServed)}/s: check the instrumentation or what runs between release and the next waiter`;
  } else if (
    poolIsLimit &&
    predictedWait !== null &&
    queueMax &&
    Math.abs(predictedWait - measuredWait) > 0.5 * predictedWait + 20
  ) {
    disagreement = `predicted wait with the queue full ${fmt(predictedWait)} ms vs measured wait p95 ${fmt(measuredWait)} ms`;
  }
  return {
    holdMsBelowKnee: holdBelow === null ? null : Math.round(holdBelow * 100000) / 100,
    predictedCeilingPerSec: predictedCeiling === null ? null : Math.round(predictedCeiling * 10) / 10,
    holdMsAtPlateau: holdAtPlateau === null ? null : Math.round(holdAtPlateau * 100000) / 100,
    predictedQueueWaitMs: predictedWait === null ? null : Math.round(predictedWait * 10) / 10,
    measuredWaitP95Ms: measuredWait,
    disagreement,
  };
}
