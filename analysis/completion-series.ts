// When responses completed and how many requests were in flight, along the client's clock.
import type { LatencySummary } from '../contract/index.ts';
import { LatencyCounts } from './latency-counts.ts';
import {
  bounded,
  expect,
  finite,
  packNumbers,
  packRecords,
  unbounded,
  unpackNumbers,
  unpackRecords,
} from './summary-codec.ts';

/** Width of a completion bin, s: fine enough for windows measured in seconds. */
const BIN_SECONDS = 0.01;

interface Bin {
  answered: number;
  ok2xx: number;
}

/** A CompletionSeries as the client summary keeps it (see {@link CompletionSeries.state}). */
export interface CompletionSeriesState {
  /** Completion bins: [index step, answered, ok2xx]… */
  bins: number[];
  inFlight: number[];
  sends: number[];
  /** [second, LatencyCounts.encode()] pairs. */
  latencyBySecond: [number, number[]][];
  subSecond: boolean;
  /** null: nothing completed yet. */
  lastEndS: number | null;
}

/** What completed within one window of the client's clock. */
export interface WindowCounts {
  /** Responses of any status (and transport failures) that completed in the window. */
  answered: number;
  /** 2xx responses that completed in the window. */
  ok2xx: number;
  /** Requests sent in the window (send time = stamp − duration), whatever their step tag. */
  sent: number;
  /** Latency of the responses that completed in the window (whole seconds, see below). */
  latency: LatencySummary;
  /** Time-weighted mean of requests in flight (sent, not yet complete) over the window. */
  inFlightMean: number;
  /** Requests in flight at the window's end. */
  inFlightAtEnd: number;
}

/**
 * Every request's completion time and duration, reduced to 10 ms bins of completions, a
 * difference array of requests in flight, and latency histograms per completed second.
 * k6 stamps an HTTP sample when its response ends (checked against real k6 v0.49 and the
 * embedded engine), so a sample's send time is its stamp minus its duration.
 *
 * Stamps may be whole seconds (k6's default CSV `timeFormat`) or milliseconds: with whole
 * seconds a response stamped `t` ended somewhere in [t, t + 1), and a window takes the
 * share of that second it overlaps, assuming the ends are spread evenly within it.
 *
 * Memory is bounded by the run's length, not its request count.
 */
export class CompletionSeries {
  #bins = new Map<number, Bin>();
  /** In-flight changes per bin: +1 where a request was sent, −1 where it completed. */
  #inFlight = new Map<number, number>();
  /** Requests sent per bin. */
  #sends = new Map<number, number>();
  #latencyBySecond = new Map<number, LatencyCounts>();
  #sortedInFlight: number[] | undefined;
  #subSecond = false;
  #lastEndS = Number.NEGATIVE_INFINITY;
  // Responses arrive nearly in time order: the last bin and second touched are usually the next.
  #lastBinIndex = Number.NaN;
  #lastBin: Bin | undefined;
  #lastSecond = Number.NaN;
  #lastHistogram: LatencyCounts | undefined;

  /** Adds one request that ended at `endS` (epoch s) after `durationMs`. */
  add(endS: number, durationMs: number, ok2xx: boolean): void {
    if (!this.#subSecond && endS % 1 !== 0) this.#subSecond = true;
    if (endS > this.#lastEndS) this.#lastEndS = endS;
    const endBin = Math.floor(endS / BIN_SECONDS);
    let bin = endBin === this.#lastBinIndex ? this.#lastBin : this.#bins.get(endBin);
    if (!bin) {
      bin = { answered: 0, ok2xx: 0 };
      this.#bins.set(endBin, bin);
    }
    this.#lastBinIndex = endBin;
    this.#lastBin = bin;
    bin.answered++;
    if (ok2xx) bin.ok2xx++;
    this.#sortedInFlight = undefined;
    const sendBin = Math.floor((endS - Math.max(0, durationMs) / 1000) / BIN_SECONDS);
    this.#inFlight.set(sendBin, (this.#inFlight.get(sendBin) ?? 0) + 1);
    this.#sends.set(sendBin, (this.#sends.get(sendBin) ?? 0) + 1);
    this.#inFlight.set(endBin, (this.#inFlight.get(endBin) ?? 0) - 1);
    const second = Math.floor(endS);
    let histogram = second === this.#lastSecond ? this.#lastHistogram : this.#latencyBySecond.get(second);
    if (!histogram) {
      histogram = new LatencyCounts();
      this.#latencyBySecond.set(second, histogram);
    }
    this.#lastSecond = second;
    this.#lastHistogram = histogram;
    histogram.record(durationMs);
  }

  /** Everything added so far, for the client summary (JSON; maps in insertion order). */
  state(): CompletionSeriesState {
    return {
      bins: packRecords(this.#bins, (bin) => [bin.answered, bin.ok2xx]),
      inFlight: packNumbers(this.#inFlight),
      sends: packNumbers(this.#sends),
      latencyBySecond: [...this.#latencyBySecond].map(([second, h]) => [second, h.encode()]),
      subSecond: this.#subSecond,
      lastEndS: unbounded(this.#lastEndS),
    };
  }

  /** The series `state()` described; SummaryShapeError when it is not such a state. */
  static fromState(state: CompletionSeriesState): CompletionSeries {
    expect(Array.isArray(state?.latencyBySecond), 'the completion series has no latency by second');
    const latencyBySecond = new Map<number, LatencyCounts>();
    for (const entry of state.latencyBySecond as unknown[]) {
      const histogram = Array.isArray(entry) ? LatencyCounts.decode(entry[1]) : undefined;
      expect(histogram !== undefined, 'a second of latency is damaged');
      latencyBySecond.set(finite((entry as unknown[])[0], 'a second of latency'), histogram);
    }
    const series = new CompletionSeries();
    series.#bins = unpackRecords(
      state.bins,
      2,
      ([answered, ok2xx]) => ({ answered: answered!, ok2xx: ok2xx! }),
      'bins',
    );
    series.#inFlight = unpackNumbers(state.inFlight, 'in flight');
    series.#sends = unpackNumbers(state.sends, 'sends');
    series.#latencyBySecond = latencyBySecond;
    expect(typeof state.subSecond === 'boolean', 'subSecond is not a boolean');
    series.#subSecond = state.subSecond;
    series.#lastEndS = bounded(state.lastEndS, Number.NEGATIVE_INFINITY, 'lastEndS');
    return series;
  }

  /** How finely the stamps resolve time, s: 1 for whole-second stamps, else 0.001. */
  get resolutionS(): number {
    return this.#subSecond ? 0.001 : 1;
  }

  /** The latest completion stamp plus its resolution: when the last response had ended by. */
  get lastEndS(): number {
    return this.#lastEndS + this.resolutionS;
  }

  /** The counts of the window [startS, endS). */
  window(startS: number, endS: number): WindowCounts {
    const res = this.resolutionS;
    const width = Math.max(res, BIN_SECONDS);
    let answered = 0;
    let ok2xx = 0;
    for (const [index, bin] of this.#bins) {
      const from = index * BIN_SECONDS;
      const share = overlap(from, from + width, startS, endS) / width;
      if (share <= 0) continue;
      answered += bin.answered * share;
      ok2xx += bin.ok2xx * share;
    }
    let sent = 0;
    for (const [index, count] of this.#sends) {
      const from = index * BIN_SECONDS;
      const share = overlap(from, from + width, startS, endS) / width;
      if (share > 0) sent += count * share;
    }
    const latency = new LatencyCounts();
    for (const [second, histogram] of this.#latencyBySecond) {
      // A second belongs to the window holding its middle.
      const middle = second + 0.5;
      if (middle >= startS && middle < endS) latency.add(histogram);
    }
    const { mean, atEnd } = this.#inFlightOver(startS, endS, res / 2);
    return {
      answered: Math.round(answered),
      ok2xx: Math.round(ok2xx),
      sent: Math.round(sent),
      latency: latency.summary(),
      inFlightMean: mean,
      inFlightAtEnd: atEnd,
    };
  }

  /** Latency of the responses completed in each epoch second (the report's per-second percentiles). */
  latencyBySecond(): Map<number, LatencySummary> {
    return new Map([...this.#latencyBySecond].map(([second, h]) => [second, h.summary()]));
  }

  /** Requests in flight at `atS` (epoch s). */
  inFlightAt(atS: number): number {
    return this.#inFlightOver(atS, atS, this.resolutionS / 2).atEnd;
  }

  /**
   * Mean requests in flight over [startS, endS) and the count at its end, from the
   * difference array. Bins are shifted by `shiftS` (half the stamps' resolution) so that
   * whole-second stamps are read as the middle of their second.
   */
  #inFlightOver(startS: number, endS: number, shiftS: number): { mean: number; atEnd: number } {
    this.#sortedInFlight ??= [...this.#inFlight.keys()].sort((a, b) => a - b);
    const keys = this.#sortedInFlight;
    let level = 0;
    let area = 0;
    let previous = startS;
    for (const key of keys) {
      const at = key * BIN_SECONDS + shiftS;
      if (at > endS) break;
      if (at > startS) {
        area += level * (at - previous);
        previous = at;
      }
      level += this.#inFlight.get(key)!;
    }
    if (endS > previous) area += level * (endS - previous);
    const length = endS - startS;
    return { mean: length > 0 ? Math.round((area / length) * 100) / 100 : level, atEnd: level };
  }
}

function overlap(a0: number, a1: number, b0: number, b1: number): number {
  return Math.max(0, Math.min(a1, b1) - Math.max(a0, b0));
}
