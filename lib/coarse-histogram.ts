// A small, fixed latency histogram for one second's percentile: cheap to fill, walk and empty.

/** Lower edge of the first bucket, ms: values at or under it share bucket 0. */
const FLOOR_MS = 0.1;
/** Buckets per doubling: each is 2^(1/16) ≈ 4.4 % wider than the one before. */
const PER_DOUBLING = 16;
/** One hour, the same ceiling as LatencyHistogram; larger values share the last bucket. */
const CEILING_MS = 3_600_000;
/** ⌈16 · log2(3,600,000 ÷ 0.1)⌉ = 402, plus bucket 0. */
const BUCKETS = Math.ceil(PER_DOUBLING * Math.log2(CEILING_MS / FLOOR_MS)) + 1;

/**
 * Counts durations in 403 log-spaced buckets: bucket i holds (0.1·2^((i−1)/16), 0.1·2^(i/16)] ms.
 * `record` is one log and one increment; `percentile` walks at most 403 counts, whatever
 * was recorded (an HDR histogram's walk grows with the values' range: tens of ms for
 * multi-second latencies, too much to do every second on a service's event loop). Answers
 * are a bucket's upper edge, so at most 4.4 % high, and never above the largest value.
 */
export class CoarseHistogram {
  readonly #counts = new Uint32Array(BUCKETS);
  #count = 0;
  #maxMs = 0;
  /** Highest bucket used since the last reset: percentile and reset stop there. */
  #top = 0;

  /** Records one duration in milliseconds (negative values count as 0). */
  record(durationMs: number): void {
    const index =
      durationMs <= FLOOR_MS
        ? 0
        : Math.min(BUCKETS - 1, Math.ceil(PER_DOUBLING * Math.log2(durationMs / FLOOR_MS)));
    this.#counts[index]!++;
    if (index > this.#top) this.#top = index;
    if (this.#count === 0 || durationMs > this.#maxMs) this.#maxMs = Math.max(0, durationMs);
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  /**
   * The p-th percentile (0 < p ≤ 100) by nearest rank, in ms: the upper edge of the bucket
   * holding the ⌈p·n/100⌉-th value, capped at the largest value; null when empty.
   */
  percentile(p: number): number | null {
    if (this.#count === 0) return null;
    const rank = Math.max(1, Math.ceil((p / 100) * this.#count));
    let seen = 0;
    for (let i = 0; i <= this.#top; i++) {
      seen += this.#counts[i]!;
      if (seen >= rank) return Math.min(this.#maxMs, FLOOR_MS * 2 ** (i / PER_DOUBLING));
    }
    return this.#maxMs;
  }

  /** Empties it for the next second. */
  reset(): void {
    this.#counts.fill(0, 0, this.#top + 1);
    this.#count = 0;
    this.#maxMs = 0;
    this.#top = 0;
  }
}
