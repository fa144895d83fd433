// Latency distributions for the client pass: HDR's buckets counted in plain typed arrays.
import type { LatencySummary } from '../contract/index.ts';

/*
 * The bucket layout of lib/latency-histogram.ts's HDR histogram (hdr-histogram-js, lowest
 * discernible value 1 µs, highest 3.6e9 µs, 3 significant digits), worked out once:
 *   single-unit resolution up to 2 × 10^3 → 2^11 = 2048 sub-buckets per bucket (half: 1024);
 *   a bucket k covers [0, 2048 × 2^k) in steps of 2^k; 2048 × 2^21 > 3.6e9 → 22 buckets;
 *   the counts array holds (22 + 1) × 1024 = 23,552 entries.
 * Value v (µs) is counted at index (k + 1) × 1024 + ⌊v / 2^k⌋ − 1024, k = max(⌊log₂ v⌋ − 10, 0).
 * analysis/latency-counts.test.ts checks every summary against hdr-histogram-js itself.
 */
const HALF_COUNT_MAGNITUDE = 10;
const HALF_COUNT = 1 << HALF_COUNT_MAGNITUDE;
const SUB_BUCKET_COUNT = 2 * HALF_COUNT;
const COUNTS_LENGTH = 23 * HALF_COUNT;
/** Values are recorded in microseconds; one hour is the ceiling (larger values clamp). */
const HIGHEST_US = 3_600_000_000;
/** Entries per chunk: a chunk exists only once a value falls in it. */
const CHUNK_BITS = 8;
const CHUNK = 1 << CHUNK_BITS;
const CHUNKS = COUNTS_LENGTH / CHUNK;

/**
 * A latency distribution read exactly as LatencyHistogram reads it (the same count, mean,
 * p50/p95/p99 and max, to the microsecond), built for the one pass over a client file that
 * records every response several times: recording is an index computation and an increment,
 * where the packed HDR array searched its index on every value. Counts live in 256-entry
 * chunks made as values reach them, so a second's histogram holds a few kilobytes. A single
 * bucket holds up to 2^32 − 1 values (4 billion responses within 0.1 % of one latency).
 */
export class LatencyCounts {
  #chunks: (Uint32Array | undefined)[] = [];
  #total = 0;
  /** The largest value recorded, µs (HDR keeps the raw value, not its bucket's). */
  #maxUs = 0;
  #summary: LatencySummary | undefined;

  /** Records one duration in milliseconds (negative values count as 0). */
  record(durationMs: number): void {
    const us = Math.min(HIGHEST_US, Math.max(0, Math.round(durationMs * 1000)));
    this.#count(us < SUB_BUCKET_COUNT ? us : indexOf(us), 1);
    if (us > this.#maxUs) this.#maxUs = us;
    this.#total++;
    this.#summary = undefined;
  }

  get count(): number {
    return this.#total;
  }

  /** Adds every value recorded in `other`. */
  add(other: LatencyCounts): void {
    const chunks = other.#chunks;
    for (let c = 0; c < chunks.length; c++) {
      const from = chunks[c];
      if (from === undefined) continue;
      let to = this.#chunks[c];
      if (to === undefined) {
        to = new Uint32Array(CHUNK);
        this.#chunks[c] = to;
      }
      for (let i = 0; i < CHUNK; i++) to[i]! += from[i]!;
    }
    this.#total += other.#total;
    if (other.#maxUs > this.#maxUs) this.#maxUs = other.#maxUs;
    this.#summary = undefined;
  }

  /** count, mean and p50/p95/p99/max in milliseconds; all 0 when empty (kept until a value is added). */
  summary(): LatencySummary {
    this.#summary ??= this.#summarise();
    return { ...this.#summary };
  }

  /**
   * The counts as numbers for the client summary file: `[count, max µs, (index step, count)…]`,
   * each index given as its distance from the previous one.
   */
  encode(): number[] {
    const out = [this.#total, this.#maxUs];
    let previous = 0;
    this.#each((index, count) => {
      out.push(index - previous, count);
      previous = index;
    });
    return out;
  }

  /** The histogram `encode` wrote; undefined when `numbers` is not such an encoding. */
  static decode(numbers: unknown): LatencyCounts | undefined {
    if (!Array.isArray(numbers) || numbers.length < 2 || numbers.length % 2 !== 0) return undefined;
    const counts = new LatencyCounts();
    let index = 0;
    let total = 0;
    for (let i = 2; i < numbers.length; i += 2) {
      index += numbers[i] as number;
      const count = numbers[i + 1] as number;
      if (!Number.isInteger(index) || index < 0 || index >= COUNTS_LENGTH) return undefined;
      if (!Number.isInteger(count) || count <= 0) return undefined;
      counts.#count(index, count);
      total += count;
    }
    const [recorded, maxUs] = numbers as number[];
    if (recorded !== total || !Number.isInteger(maxUs) || maxUs! < 0 || maxUs! > HIGHEST_US) return undefined;
    counts.#total = total;
    counts.#maxUs = maxUs!;
    return counts;
  }

  #count(index: number, by: number): void {
    const c = index >>> CHUNK_BITS;
    let chunk = this.#chunks[c];
    if (chunk === undefined) {
      chunk = new Uint32Array(CHUNK);
      this.#chunks[c] = chunk;
    }
    chunk[index & (CHUNK - 1)]! += by;
  }

  /** Every non-zero count with its index, lowest first. */
  #each(visit: (index: number, count: number) => void): void {
    const chunks = this.#chunks;
    for (let c = 0; c < Math.min(chunks.length, CHUNKS); c++) {
      const chunk = chunks[c];
      if (chunk === undefined) continue;
      for (let i = 0; i < CHUNK; i++) if (chunk[i] !== 0) visit((c << CHUNK_BITS) + i, chunk[i]!);
    }
  }

  #summarise(): LatencySummary {
    const total = this.#total;
    if (total === 0) return { count: 0, mean: 0, p50: 0, p95: 0, p99: 0, max: 0 };
    // As hdr-histogram-js: the mean sums each bucket's middle value (its iterator's order),
    // a percentile is the highest value of the bucket where the running count reaches it.
    const wanted = [50, 95, 99].map((p) => countAtPercentile(p, total));
    const at = [0, 0, 0];
    let sum = 0;
    let running = 0;
    this.#each((index, count) => {
      const highest = highestEquivalentValue(valueFromIndex(index));
      sum += medianEquivalentValue(highest) * count;
      const before = running;
      running += count;
      for (let p = 0; p < 3; p++) if (before < wanted[p]! && running >= wanted[p]!) at[p] = highest;
    });
    const ms = (us: number) => Math.round(us) / 1000;
    return {
      count: total,
      mean: ms(sum / total),
      p50: ms(at[0]!),
      p95: ms(at[1]!),
      p99: ms(at[2]!),
      max: ms(this.#maxUs),
    };
  }
}

/** The counts index of `us` ≥ 2048 (below that, the index is the value). */
function indexOf(us: number): number {
  // ⌊log₂ us⌋ from the leading zeros: us < 2^32 (the ceiling is 3.6e9).
  const bucket = 31 - Math.clz32(us) - HALF_COUNT_MAGNITUDE;
  return ((bucket + 1) << HALF_COUNT_MAGNITUDE) + (us >>> bucket) - HALF_COUNT;
}

// hdr-histogram-js's own arithmetic for reading the counts (JsHistogram.ts), kept as written
// there (⌊log₂⌋ by Math.log2) so that summaries match it to the last bit.
function bucketIndex(value: number): number {
  return Math.max(Math.floor(Math.log2(value)) - HALF_COUNT_MAGNITUDE, 0);
}

function valueFromIndex(index: number): number {
  let bucket = Math.floor(index / HALF_COUNT) - 1;
  let sub = (index % HALF_COUNT) + HALF_COUNT;
  if (bucket < 0) {
    sub -= HALF_COUNT;
    bucket = 0;
  }
  return sub * 2 ** bucket;
}

function lowestEquivalentValue(value: number): number {
  const bucket = bucketIndex(value);
  return Math.floor(value / 2 ** bucket) * 2 ** bucket;
}

function sizeOfEquivalentValueRange(value: number): number {
  const bucket = bucketIndex(value);
  const sub = Math.floor(value / 2 ** bucket);
  return 2 ** (sub >= SUB_BUCKET_COUNT ? bucket + 1 : bucket);
}

function highestEquivalentValue(value: number): number {
  return lowestEquivalentValue(value) + sizeOfEquivalentValueRange(value) - 1;
}

function medianEquivalentValue(value: number): number {
  return lowestEquivalentValue(value) + Math.floor(sizeOfEquivalentValueRange(value) / 2);
}

/** The running count a percentile needs: ⌈p/100 × total⌉, guarded by one ulp as HDR does, at least 1. */
function countAtPercentile(percentile: number, total: number): number {
  const fp = (percentile / 100) * total;
  const ulp = 2 ** (Math.floor(Math.log2(fp)) - 52);
  return Math.max(Math.ceil(fp - ulp), 1);
}
