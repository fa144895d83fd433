// The plateau: the first rate step whose served rate stopped following what the client sent.
import type { SaturationRow, VerdictCriteria } from '../../contract/index.ts';

/** Where served stopped following sent, and the rows around it. */
export interface PlateauFound {
  /** The first rate step whose served rate fell below `followingShare` of what was sent. */
  row: SaturationRow;
  /** Its index among the rate rows. */
  index: number;
  /** The rate rows from the plateau's on. */
  beyond: SaturationRow[];
  /**
   * The served rate the service holds: the best any valid rate step reached (the knee's
   * step often serves a little more than the overloaded ones after it).
   */
  servedPerSec: number;
  /** The first rate step: what each resource held when nothing waited. */
  baseline: SaturationRow;
  /** The step before the plateau, when there is one. */
  knee: SaturationRow | undefined;
}

/**
 * The plateau among the rate rows (those with an offered rate), or null when served
 * followed sent throughout. Served follows the load the client actually sent: a step's
 * average includes its ramp from the previous rate, so it is below the step's target even
 * when nothing is wrong.
 */
export function findPlateau(rateRows: SaturationRow[], criteria: VerdictCriteria): PlateauFound | null {
  const index = rateRows.findIndex((r) => r.servedPerSec < criteria.followingShare * r.sentPerSec);
  if (index < 0) return null;
  const row = rateRows[index]!;
  return {
    row,
    index,
    beyond: rateRows.slice(index),
    servedPerSec: Math.max(
      row.servedPerSec,
      ...rateRows.filter((r) => !r.invalid).map((r) => r.servedPerSec),
    ),
    baseline: rateRows[0]!,
    knee: index > 0 ? rateRows[index - 1] : undefined,
  };
}
