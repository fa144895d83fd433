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
 * Every value, for exact percentiles as k6 computes them: sort, then interpolate linearly
 * at index p·(n−1). Values are kept in a growable Float64Array (8 bytes each).
 */
export class TrendSink implements Sink {
  #values = new Float64Array(1024);
  #count = 0;
  #sorted = true;
  sum = 0;
  min = 0;
  max = 0;

  add(value: number): void {
    if (this.#count === this.#values.length) {
      const grown = new Float64Array(this.#values.length * 2);
      grown.set(this.#values);
      this.#values = grown;
    }
    if (this.#count === 0 || value < this.min) this.min = value;
    if (this.#count === 0 || value > this.max) this.max = value;
    if (this.#count > 0 && value < this.#values[this.#count - 1]!) this.#sorted = false;
    this.#values[this.#count++] = value;
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
    if (!this.#sorted) {
      this.#values.subarray(0, n).sort();
      this.#sorted = true;
    }
    const index = (p / 100) * (n - 1);
    const lower = Math.floor(index);
    const upper = Math.min(n - 1, lower + 1);
    const fraction = index - lower;
    return this.#values[lower]! + (this.#values[upper]! - this.#values[lower]!) * fraction;
  }
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
