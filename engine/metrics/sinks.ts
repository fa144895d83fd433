// Aggregates of each metric type, as k6's summary and thresholds read them.

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

/** Sum of values (`count`) and its rate per second of test time. */
export class CounterSink implements Sink {
  count = 0;
  #samples = 0;
  add(value: number): void {
    this.count += value;
    this.#samples++;
  }
  get isEmpty(): boolean {
    return this.#samples === 0;
  }
}

/** Last value, and the lowest and highest seen. */
export class GaugeSink implements Sink {
  value = 0;
  min = 0;
  max = 0;
  #seen = false;
  add(value: number): void {
    if (!this.#seen || value < this.min) this.min = value;
    if (!this.#seen || value > this.max) this.max = value;
    this.value = value;
    this.#seen = true;
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

/**
 * An empty array that already holds objects, as V8 sees it. A `[]` starts out as an array
 * of small integers and changes shape at its first push; code optimized for trends that
 * had grown (the engine's warm-up rehearsal) was thrown away at the first value of every
 * trend a test then made. An array's element kind never goes back, so this one is born
 * for objects.
 */
function emptyChunkList(): Float64Array[] {
  const list = [new Float64Array(0)];
  list.length = 0;
  return list;
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
  readonly #chunks: Float64Array[] = emptyChunkList();
  /** Leading chunks already sorted in place (full chunks never change again). */
  #sortedChunks = 0;
  #count = 0;
  sum = 0;
  min = 0;
  max = 0;

  constructor(chunkValues = TREND_CHUNK_VALUES) {
    this.#chunkValues = chunkValues;
  }

  add(value: number): void {
    const within = this.#count % this.#chunkValues;
    if (within === 0) this.#chunks.push(new Float64Array(this.#chunkValues));
    this.#chunks[this.#chunks.length - 1]![within] = value;
    if (this.#count === 0 || value < this.min) this.min = value;
    if (this.#count === 0 || value > this.max) this.max = value;
    this.#count++;
    this.sum += value;
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
