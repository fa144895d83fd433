// Aggregates of each metric type, as k6's summary and thresholds read them.
import { emptyObjectArray } from '../../lib/object-array.ts';

/** The four k6 metric types. */
export const METRIC_TYPES = ['counter', 'gauge', 'rate', 'trend'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

/** What a metric's values are: plain numbers, milliseconds, or bytes. */
export type ValueKind = 'default' | 'time' | 'data';

/** An aggregate that takes samples. */
export interface Sink {
  add(value: number): void;
  /** Whether any sample was added. */
  readonly isEmpty: boolean;
}

/*
 * Running numbers that become fractions (sums, minima, maxima, a gauge's value) live in
 * Float64Arrays rather than in fields that start at 0. V8 stores a field that starts as a
 * small integer as one, and the first fraction changes the shape of that object, and of
 * every sink made before it, for good. The test's sinks are made before the engine's
 * warm-up rehearsal has run (the script's init makes them), so the first sample of each
 * one threw away code the rehearsal had optimized (engine/warm-up.ts).
 */

/** Sum of values (`count`) and its rate per second of test time. */
export class CounterSink implements Sink {
  readonly #sum = new Float64Array(1);
  #samples = 0;
  add(value: number): void {
    this.#sum[0]! += value;
    this.#samples++;
  }
  get count(): number {
    return this.#sum[0]!;
  }
  get isEmpty(): boolean {
    return this.#samples === 0;
  }
}

const VALUE = 0;
const SUM = 0;
const MIN = 1;
const MAX = 2;

/** Last value, and the lowest and highest seen. */
export class GaugeSink implements Sink {
  /** The last value, the lowest and the highest. */
  readonly #values = new Float64Array(3);
  #seen = false;
  add(value: number): void {
    const values = this.#values;
    if (!this.#seen || value < values[MIN]!) values[MIN] = value;
    if (!this.#seen || value > values[MAX]!) values[MAX] = value;
    values[VALUE] = value;
    this.#seen = true;
  }
  get value(): number {
    return this.#values[VALUE]!;
  }
  get min(): number {
    return this.#values[MIN]!;
  }
  get max(): number {
    return this.#values[MAX]!;
  }
  get isEmpty(): boolean {
    return !this.#seen;
  }
}

/** Share of non-zero samples: `passes` are non-zero, `fails` zero. */
export class RateSink implements Sink {
  passes = 0;
  total = 0;
  add(value: number): void {
    this.total++;
    if (value !== 0) this.passes++;
  }
  get fails(): number {
    return this.total - this.passes;
  }
  get rate(): number {
    return this.total === 0 ? 0 : this.passes / this.total;
  }
  get isEmpty(): boolean {
    return this.total === 0;
  }
}

/** Values per TrendSink chunk: 128 KB, small enough that growing a trend never stalls the GC. */
const TREND_CHUNK_VALUES = 16 * 1024;

/**
 * Every value, for exact percentiles as k6 computes them (sort, then interpolate linearly
 * at index p·(n−1)). Values go into fixed-size Float64Array chunks (8 bytes each) rather
 * than one array that doubles: at 10,000 requests/s, copying a trend into a new
 * multi-megabyte buffer set off seconds of slow garbage collection, which showed up as
 * start lag. A percentile sorts each full chunk once, sorts a copy of the partial one,
 * and selects the ranks it needs across the sorted chunks without merging them.
 */
export class TrendSink implements Sink {
  readonly #chunkValues: number;
  readonly #chunks: Float64Array[] = emptyObjectArray(); // see lib/object-array.ts
  /** Leading chunks already sorted in place (full chunks never change again). */
  #sortedChunks = 0;
  #count = 0;
  /** The sum, the lowest and the highest value (see the note above CounterSink). */
  readonly #stats = new Float64Array(3);

  constructor(chunkValues = TREND_CHUNK_VALUES) {
    this.#chunkValues = chunkValues;
  }

  add(value: number): void {
    const within = this.#count % this.#chunkValues;
    if (within === 0) this.#chunks.push(new Float64Array(this.#chunkValues));
    this.#chunks[this.#chunks.length - 1]![within] = value;
    const stats = this.#stats;
    if (this.#count === 0 || value < stats[MIN]!) stats[MIN] = value;
    if (this.#count === 0 || value > stats[MAX]!) stats[MAX] = value;
    this.#count++;
    stats[SUM]! += value;
  }

  get sum(): number {
    return this.#stats[SUM]!;
  }

  get min(): number {
    return this.#stats[MIN]!;
  }

  get max(): number {
    return this.#stats[MAX]!;
  }

  get count(): number {
    return this.#count;
  }

  get isEmpty(): boolean {
    return this.#count === 0;
  }

  get avg(): number {
    return this.#count === 0 ? 0 : this.sum / this.#count;
  }

  get med(): number {
    return this.percentile(50);
  }

  /** The p-th percentile, 0 ≤ p ≤ 100; 0 for an empty trend. */
  percentile(p: number): number {
    const n = this.#count;
    if (n === 0) return 0;
    const runs = this.#sortedRuns();
    const index = (p / 100) * (n - 1);
    const lower = Math.floor(index);
    const fraction = index - lower;
    const low = selectRank(runs, lower);
    if (fraction === 0 || lower + 1 >= n) return low;
    return low + (selectRank(runs, lower + 1) - low) * fraction;
  }

  /** Every value as sorted runs: the full chunks (sorted once) and a sorted copy of the rest. */
  #sortedRuns(): Float64Array[] {
    const full = Math.floor(this.#count / this.#chunkValues);
    for (; this.#sortedChunks < full; this.#sortedChunks++) this.#chunks[this.#sortedChunks]!.sort();
    const runs = this.#chunks.slice(0, full);
    const rest = this.#count - full * this.#chunkValues;
    if (rest > 0) runs.push(this.#chunks[full]!.slice(0, rest).sort());
    return runs;
  }
}

/**
 * The value of 0-based `rank` in the union of sorted `runs`. Narrows a window in every run
 * around a pivot (the middle of the widest window) until the rank falls on the pivot:
 * each round at least halves the widest window, so it takes O(runs × log n) rounds of
 * binary searches and no copying.
 */
export function selectRank(runs: readonly Float64Array[], rank: number): number {
  const lo = runs.map(() => 0);
  const hi = runs.map((run) => run.length);
  let k = rank;
  for (;;) {
    let widest = -1;
    for (let i = 0; i < runs.length; i++) {
      if (hi[i]! > lo[i]! && (widest < 0 || hi[i]! - lo[i]! > hi[widest]! - lo[widest]!)) widest = i;
    }
    if (widest < 0) throw new RangeError(`rank ${rank} is outside the values`);
    const pivot = runs[widest]![(lo[widest]! + hi[widest]!) >>> 1]!;
    let below = 0;
    let upTo = 0;
    const lessEnds: number[] = [];
    const equalEnds: number[] = [];
    for (let i = 0; i < runs.length; i++) {
      const less = bound(runs[i]!, pivot, lo[i]!, hi[i]!, false);
      const equal = bound(runs[i]!, pivot, less, hi[i]!, true);
      lessEnds.push(less);
      equalEnds.push(equal);
      below += less - lo[i]!;
      upTo += equal - lo[i]!;
    }
    if (k < below) {
      for (let i = 0; i < runs.length; i++) hi[i] = lessEnds[i]!;
    } else if (k < upTo) {
      return pivot;
    } else {
      k -= upTo;
      for (let i = 0; i < runs.length; i++) lo[i] = equalEnds[i]!;
    }
  }
}

/** First index in sorted `run[from, to)` whose value is ≥ `value` (or > `value` when `after`). */
function bound(run: Float64Array, value: number, from: number, to: number, after: boolean): number {
  let low = from;
  let high = to;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (run[mid]! < value || (after && run[mid] === value)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** A new empty sink for a metric type. */
export function newSink(type: MetricType): CounterSink | GaugeSink | RateSink | TrendSink {
  switch (type) {
    case 'counter':
      return new CounterSink();
    case 'gauge':
      return new GaugeSink();
    case 'rate':
      return new RateSink();
    case 'trend':
      return new TrendSink();
  }
}
