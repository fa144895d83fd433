// A resource's figures over one step's window, for the saturation table and the verdict.
import type { ResourceSeries, ResourceStepFigures } from '../../contract/index.ts';

/**
 * The figures of `series` over the seconds t with startS ≤ t < endS (epoch s) that had a
 * reading: means over the seconds each figure had, maxima of in use and waiting, capacity's
 * mean, utilisation = inUseMean ÷ capacity × 100, refusals summed over the seconds (each
 * second's figure is a count in that second), acquisitions as their mean per second, and the
 * mean of each `extra` breakdown. A figure no second had is null; a window without readings
 * gives `seconds: 0` and every figure null. Rounded to 2 decimals.
 */
export function resourceStepFigures(
  series: ResourceSeries,
  window: { startS: number; endS: number },
): ResourceStepFigures {
  const inUse = new Tally();
  const capacity = new Tally();
  const waiting = new Tally();
  const waitMs = new Tally();
  const holdMs = new Tally();
  const refused = new Tally();
  const acquired = new Tally();
  const extra = new Map<string, Tally>();
  let seconds = 0;
  for (const second of series.seconds) {
    if (second.t < window.startS || second.t >= window.endS) continue;
    seconds++;
    inUse.add(second.inUse);
    capacity.add(second.capacity);
    waiting.add(second.waiting);
    waitMs.add(second.waitMs);
    holdMs.add(second.holdMs);
    refused.add(second.refused);
    acquired.add(second.acquired);
    for (const [key, value] of Object.entries(second.extra ?? {})) {
      let tally = extra.get(key);
      if (!tally) {
        tally = new Tally();
        extra.set(key, tally);
      }
      tally.add(value);
    }
  }
  const inUseMean = inUse.mean();
  const capacityMean = capacity.mean();
  const figures: ResourceStepFigures = {
    id: series.id,
    name: series.name,
    kind: series.kind,
    role: series.role,
    position: series.position,
    seconds,
    inUseMean: round(inUseMean),
    inUseMax: round(inUse.max),
    capacity: round(capacityMean),
    utilisationPct:
      inUseMean !== null && capacityMean !== null && capacityMean > 0
        ? round((inUseMean / capacityMean) * 100)
        : null,
    waitingMean: round(waiting.mean()),
    waitingMax: round(waiting.max),
    waitMsMean: round(waitMs.mean()),
    holdMsMean: round(holdMs.mean()),
    refused: round(refused.n > 0 ? refused.sum : null),
    acquiredPerSec: round(acquired.mean()),
  };
  if (extra.size > 0) {
    figures.extra = {};
    for (const [key, tally] of extra) figures.extra[key] = round(tally.mean())!;
  }
  return figures;
}

/** Sum, count and max of a figure's non-null values. */
class Tally {
  sum = 0;
  n = 0;
  max: number | null = null;

  add(value: number | null): void {
    if (value === null) return;
    this.sum += value;
    this.n++;
    if (this.max === null || value > this.max) this.max = value;
  }

  mean(): number | null {
    return this.n > 0 ? this.sum / this.n : null;
  }
}

function round(x: number | null): number | null {
  return x === null ? null : Math.round(x * 100) / 100;
}
