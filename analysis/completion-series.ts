// When responses completed and how many requests were in flight, along the client's clock.
import type { LatencySummary } from '../contract/index.ts';
import { LatencyHistogram } from '../lib/latency-histogram.ts';

/** Width of a completion bin, s: fine enough for windows measured in seconds. */
const BIN_SECONDS = 0.01;

interface Bin {
  answered: number;
  ok2xx: number;
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
  readonly #bins = new Map<number, Bin>();
  /** In-flight changes per bin: +1 where a request was sent, −1 where it completed. */
  readonly #inFlight = new Map<number, number>();
  /** Requests sent per bin. */
  readonly #sends = new Map<number, number>();
  readonly #latencyBySecond = new Map<number, LatencyHistogram>();
  #sortedInFlight: number[] | undefined;
  #subSecond = false;
  #lastEndS = Number.NEGATIVE_INFINITY;

  /** Adds one request that ended at `endS` (epoch s) after `durationMs`. */
  add(endS: number, durationMs: number, ok2xx: boolean): void {
    if (!this.#subSecond && endS % 1 !== 0) this.#subSecond = true;
    if (endS > this.#lastEndS) this.#lastEndS = endS;
    const endBin = Math.floor(endS / BIN_SECONDS);
    let bin = this.#bins.get(endBin);
    if (!bin) {
      bin = { answered: 0, ok2xx: 0 };
      this.#bins.set(endBin, bin);
    }
    bin.answered++;
    if (ok2xx) bin.ok2xx++;
    this.#sortedInFlight = undefined;
    const sendBin = Math.floor((endS - Math.max(0, durationMs) / 1000) / BIN_SECONDS);
    this.#inFlight.set(sendBin, (this.#inFlight.get(sendBin) ?? 0) + 1);
    this.#sends.set(sendBin, (this.#sends.get(sendBin) ?? 0) + 1);
    this.#inFlight.set(endBin, (this.#inFlight.get(endBin) ?? 0) - 1);
    const second = Math.floor(endS);
    let histogram = this.#latencyBySecond.get(second);
    if (!histogram) {
      histogram = new LatencyHistogram();
      this.#latencyBySecond.set(second, histogram);
    }
    histogram.record(durationMs);
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
    const latency = new LatencyHistogram();
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
