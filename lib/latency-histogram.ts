// Latency percentiles from an HDR histogram (hdr-histogram-js).
import * as hdr from 'hdr-histogram-js';
import type { LatencySummary } from '../contract/index.ts';

/** Values are recorded in microseconds; one hour is the ceiling (larger values clamp). */
const HIGHEST_US = 3_600_000_000;

/**
 * A latency distribution with 3 significant digits from 1 µs to 1 h, in a packed
 * histogram so that hundreds of buckets stay small.
 */
export class LatencyHistogram {
  readonly #histogram = hdr.build({
    bitBucketSize: 'packed',
    lowestDiscernibleValue: 1,
    highestTrackableValue: HIGHEST_US,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });

  /** The last summary, until the next value is recorded. */
  #summary: LatencySummary | undefined;

  /** Records one duration in milliseconds (negative values count as 0). */
  record(durationMs: number): void {
    const us = Math.min(HIGHEST_US, Math.max(0, Math.round(durationMs * 1000)));
    this.#histogram.recordValue(us);
    this.#summary = undefined;
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  /** Adds every value recorded in `other`. */
  add(other: LatencyHistogram): void {
    this.#histogram.add(other.#histogram);
    this.#summary = undefined;
  }

  /**
   * count, mean and p50/p95/p99/max in milliseconds; all 0 when empty. Each percentile
   * walks the packed counts, tens of ms for multi-second values, so the result is kept
   * until the histogram changes: a step that has ended costs nothing to report again.
   */
  summary(): LatencySummary {
    this.#summary ??= this.#summarise();
    return { ...this.#summary };
  }

  #summarise(): LatencySummary {
    const h = this.#histogram;
    if (h.totalCount === 0) return { count: 0, mean: 0, p50: 0, p95: 0, p99: 0, max: 0 };
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: h.totalCount,
      mean: ms(h.mean),
      p50: ms(h.getValueAtPercentile(50)),
      p95: ms(h.getValueAtPercentile(95)),
      p99: ms(h.getValueAtPercentile(99)),
      max: ms(h.maxValue),
    };
  }
}
