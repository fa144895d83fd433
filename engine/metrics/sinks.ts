// Aggregates of each metric type, as k6's summary and thresholds read them.
import { TrendHistogram, type TrendPage } from './trend-histogram.ts';

/** The four k6 metric types. */
export const METRIC_TYPES = ['counter', 'gauge', 'rate', 'trend'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

/** What a metric's values are: plain numbers, milliseconds, or bytes. */
export type ValueKind = 'default' | 'time' | 'data';

/**
 * A sink's content as plain data, for another process: an engine worker sends its sinks to
 * the coordinator, which merges every worker's into one test's (engine/workers/). `state()`
 * gives it and `mergeState()` adds it to a sink of the same type. A trend's `pages` may be
 * only those changed since it was last sent (TrendSink.state).
 */
export type SinkState =
  | { type: 'counter'; sum: number; samples: number }
  | { type: 'gauge'; value: number; min: number; max: number; seen: boolean }
  | { type: 'rate'; passes: number; total: number }
  | { type: 'trend'; count: number; sum: number; min: number; max: number; pages: TrendPage[] };

/**
 * How a gauge's last value combines with another process's: `sum` for what the processes
 * hold between them (VUs, CPU), `max` for anything else (the worst lag, a custom gauge).
 */
export type GaugeMerge = 'sum' | 'max';

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
  state(): Extract<SinkState, { type: 'counter' }> {
    return { type: 'counter', sum: this.#sum[0]!, samples: this.#samples };
  }
  /** Adds another counter's samples (another process's share of the test). */
  mergeState(state: Extract<SinkState, { type: 'counter' }>): void {
    this.#sum[0]! += state.sum;
    this.#samples += state.samples;
  }
}

const VALUE = 0;
const SUM = 0;
const MIN = 1;
const MAX = 2;
const COUNT = 3;

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
  state(): Extract<SinkState, { type: 'gauge' }> {
    const values = this.#values;
    return { type: 'gauge', value: values[VALUE]!, min: values[MIN]!, max: values[MAX]!, seen: this.#seen };
  }
  /**
   * Takes another process's gauge, its last value combined by `merge` (processes have no
   * one last value between them): `sum` adds values, minima and maxima (what the processes
   * hold between them; min and max then bound the sum's own, which only the processes'
   * readings side by side would give exactly); `max` takes the larger value, the lower
   * minimum and the higher maximum.
   */
  mergeState(state: Extract<SinkState, { type: 'gauge' }>, merge: GaugeMerge): void {
    if (!state.seen) return;
    const values = this.#values;
    if (!this.#seen) {
      values[VALUE] = state.value;
      values[MIN] = state.min;
      values[MAX] = state.max;
      this.#seen = true;
      return;
    }
    if (merge === 'sum') {
      values[VALUE]! += state.value;
      values[MIN]! += state.min;
      values[MAX]! += state.max;
      return;
    }
    values[VALUE] = Math.max(values[VALUE]!, state.value);
    if (state.min < values[MIN]!) values[MIN] = state.min;
    if (state.max > values[MAX]!) values[MAX] = state.max;
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
  state(): Extract<SinkState, { type: 'rate' }> {
    return { type: 'rate', passes: this.passes, total: this.total };
  }
  /** Adds another rate's samples. */
  mergeState(state: Extract<SinkState, { type: 'rate' }>): void {
    this.passes += state.passes;
    this.total += state.total;
  }
}

/**
 * A Trend's aggregate: count, sum, min, max and avg exact, as k6 keeps them; percentiles
 * (med, p(N)) from a bounded histogram (trend-histogram.ts), because k6's way, every value
 * kept and sorted, grows without end: 8 bytes a value, about 2.6 GB an hour at 10,000
 * requests/s (nine trends: the seven http_req_*, http_req_duration{expected_response:true}
 * and iteration_duration). Memory now grows with the range of magnitudes seen (a few
 * hundred KB for latencies), never with the count.
 *
 * A percentile is k6's, interpolated at index i = p·(n−1) between the values a and b of
 * ranks ⌊i⌋ and ⌊i⌋+1, each read from the histogram as its bucket's lower edge in
 * magnitude, at most 2⁻¹⁰ (0.098 %) nearer zero than the value itself. So when a and b have
 * one sign (any trend of durations or sizes) the percentile is within 0.098 % of k6's exact
 * figure, on the side of zero: a p(95) of durations is never above k6's. Across zero the
 * error is at most 2⁻¹⁰·max(|a|, |b|). The lowest rank reads min and the highest max,
 * exactly (p(0), p(100), and a trend of equal values); a value of at most 11 significant
 * bits (an integer up to 2,048, or 0) reads back exactly. Negative values are kept like
 * positive ones, in buckets of their own; any finite double has a bucket.
 */
export class TrendSink implements Sink {
  readonly #histogram = new TrendHistogram();
  /**
   * The sum, the lowest value, the highest and the count (see the note above CounterSink):
   * a count in a field would outgrow V8's small integers at 2³⁰ values, 30 hours at
   * 10,000/s, and change the sink's hidden class in the middle of a run.
   */
  readonly #stats = new Float64Array(4);

  /** Takes one finite value; allocates only when the value opens a histogram page. */
  add(value: number): void {
    this.#histogram.record(value);
    const stats = this.#stats;
    if (stats[COUNT] === 0 || value < stats[MIN]!) stats[MIN] = value;
    if (stats[COUNT] === 0 || value > stats[MAX]!) stats[MAX] = value;
    stats[COUNT]! += 1;
    stats[SUM]! += value;
  }

  /**
   * Adds every value of `other` (another process's share of a test, say): afterwards this
   * sink answers exactly as one that had been given both sinks' values, but for the sum's
   * floating-point rounding. `other` is unchanged.
   */
  merge(other: TrendSink): void {
    const theirs = other.#stats;
    if (theirs[COUNT] === 0) return;
    const ours = this.#stats;
    if (ours[COUNT] === 0 || theirs[MIN]! < ours[MIN]!) ours[MIN] = theirs[MIN]!;
    if (ours[COUNT] === 0 || theirs[MAX]! > ours[MAX]!) ours[MAX] = theirs[MAX]!;
    ours[COUNT]! += theirs[COUNT]!;
    ours[SUM]! += theirs[SUM]!;
    this.#histogram.merge(other.#histogram);
  }

  /**
   * Its content as data: count, sum, min and max, and the histogram's pages. With `sent`
   * (kept by the caller between calls, one per sink) only the pages changed since the last
   * call: a receiver keeps its own copy of every page (engine/workers/worker-mirror.ts).
   */
  state(sent?: Map<number, number>): Extract<SinkState, { type: 'trend' }> {
    const stats = this.#stats;
    return {
      type: 'trend',
      count: stats[COUNT]!,
      sum: stats[SUM]!,
      min: stats[MIN]!,
      max: stats[MAX]!,
      pages: this.#histogram.pages(sent),
    };
  }

  /**
   * Adds a whole trend given as data (every page of it, not only changed ones), as
   * `merge` adds a sink: afterwards this one answers as if it had been given both's values.
   */
  mergeState(state: Extract<SinkState, { type: 'trend' }>): void {
    if (state.count === 0) return;
    const ours = this.#stats;
    if (ours[COUNT] === 0 || state.min < ours[MIN]!) ours[MIN] = state.min;
    if (ours[COUNT] === 0 || state.max > ours[MAX]!) ours[MAX] = state.max;
    ours[COUNT]! += state.count;
    ours[SUM]! += state.sum;
    for (const page of state.pages) this.#histogram.addPage(page);
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
    return this.#stats[COUNT]!;
  }

  get isEmpty(): boolean {
    return this.#stats[COUNT] === 0;
  }

  get avg(): number {
    return this.count === 0 ? 0 : this.sum / this.count;
  }

  get med(): number {
    return this.percentile(50);
  }

  /** Bytes the sink holds for its values: constant once their range is covered. */
  get bytes(): number {
    return this.#histogram.bytes + this.#stats.byteLength;
  }

  /** The p-th percentile, 0 ≤ p ≤ 100 (clamped to that range); 0 for an empty trend. */
  percentile(p: number): number {
    const n = this.count;
    if (n === 0) return 0;
    const index = (Math.min(100, Math.max(0, p)) / 100) * (n - 1);
    const lower = Math.floor(index);
    const fraction = index - lower;
    const low = this.#valueAtRank(lower);
    if (fraction === 0 || lower + 1 >= n) return low;
    return low + (this.#valueAtRank(lower + 1) - low) * fraction;
  }

  /** The value of 0-based `rank`: min and max exactly at the ends, within them otherwise. */
  #valueAtRank(rank: number): number {
    if (rank === 0) return this.min;
    if (rank === this.count - 1) return this.max;
    return Math.min(this.max, Math.max(this.min, this.#histogram.valueAtRank(rank)));
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

/** Any sink's content as data (see SinkState); `sent` is a trend's pages already sent. */
export function sinkState(sink: ReturnType<typeof newSink>, sent?: Map<number, number>): SinkState {
  return sink instanceof TrendSink ? sink.state(sent) : sink.state();
}

/**
 * Adds `state` to `sink` (`gauge` says how a gauge's last values combine). Throws when the
 * state is of another metric type: the processes of one test define each metric alike.
 */
export function mergeSinkState(sink: ReturnType<typeof newSink>, state: SinkState, gauge: GaugeMerge): void {
  if (sink instanceof CounterSink && state.type === 'counter') sink.mergeState(state);
  else if (sink instanceof GaugeSink && state.type === 'gauge') sink.mergeState(state, gauge);
  else if (sink instanceof RateSink && state.type === 'rate') sink.mergeState(state);
  else if (sink instanceof TrendSink && state.type === 'trend') sink.mergeState(state);
  else throw new TypeError(`a ${state.type} cannot merge into a ${sink.constructor.name}`);
}
