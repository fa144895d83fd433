// Exact time-weighted pool figures over a window of time.
import type { PoolUtilisation } from '../../contract/index.ts';

/**
 * Accumulates ∫ checkedOut dt and ∫ waiting dt over a window from a piecewise-constant
 * pool state. The caller feeds every interval during which the state was constant, so the
 * means are exact, not sampled: mean = area ÷ durationMs.
 */
export class PoolWindow {
  durationMs = 0;
  checkedOutArea = 0;
  waitingArea = 0;
  checkedOutMax = 0;
  waitingMax = 0;

  /** Adds `dtMs` during which `checkedOut` and `waiting` held constant. */
  add(dtMs: number, checkedOut: number, waiting: number): void {
    if (dtMs <= 0) return;
    this.durationMs += dtMs;
    this.checkedOutArea += checkedOut * dtMs;
    this.waitingArea += waiting * dtMs;
  }

  /** Notes a state the pool reached (for the maxima), even if it lasted no time. */
  observe(checkedOut: number, waiting: number): void {
    if (checkedOut > this.checkedOutMax) this.checkedOutMax = checkedOut;
    if (waiting > this.waitingMax) this.waitingMax = waiting;
  }

  get checkedOutMean(): number {
    return this.durationMs > 0 ? this.checkedOutArea / this.durationMs : 0;
  }

  get waitingMean(): number {
    return this.durationMs > 0 ? this.waitingArea / this.durationMs : 0;
  }

  /** The contract shape; `poolMax` null leaves the percentage unknown. */
  utilisation(poolMax: number | null, extra?: PoolWindow): PoolUtilisation {
    const duration = this.durationMs + (extra?.durationMs ?? 0);
    const checkedOutArea = this.checkedOutArea + (extra?.checkedOutArea ?? 0);
    const waitingArea = this.waitingArea + (extra?.waitingArea ?? 0);
    const checkedOutMean = duration > 0 ? checkedOutArea / duration : 0;
    return {
      currentMs: round(duration, 1),
      checkedOutMean: round(checkedOutMean, 4),
      checkedOutPct: poolMax ? round((checkedOutMean / poolMax) * 100, 2) : null,
      checkedOutMax: Math.max(this.checkedOutMax, extra?.checkedOutMax ?? 0),
      waitingMean: round(duration > 0 ? waitingArea / duration : 0, 4),
      waitingMax: Math.max(this.waitingMax, extra?.waitingMax ?? 0),
    };
  }
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
