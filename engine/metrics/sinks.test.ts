import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CounterSink, GaugeSink, mergeSinkState, RateSink, sinkState, TrendSink } from './sinks.ts';

/** How far a percentile may be from k6's: 2⁻¹⁰ of the larger of the two values it interpolates. */
const RELATIVE_ERROR = 2 ** -10;

/** k6's percentile over a plain sorted copy, with the two values it interpolated between. */
function reference(sorted: Float64Array, p: number): { value: number; a: number; b: number } {
  const index = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(index);
  const upper = Math.min(sorted.length - 1, lower + 1);
  const a = sorted[lower]!;
  const b = sorted[upper]!;
  return { value: a + (b - a) * (index - lower), a, b };
}

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal deviate (Box–Muller) from `next`. */
function normal(next: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next());
}

const PERCENTILES = [0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100];

/** Distributions the engine's trends see, and a custom Trend may: n values from a seeded source. */
const DISTRIBUTIONS: [string, number, (next: () => number, i: number) => number][] = [
  // Latencies in ms, uniform over 0.05–250 ms.
  ['uniform latencies', 50_000, (next) => 0.05 + next() * 250],
  // Latencies as services give them: lognormal around 20 ms with a long tail.
  ['lognormal latencies', 50_000, (next) => Math.exp(Math.log(20) + 0.8 * normal(next))],
  // Every value equal (a fixed sleep's iteration_duration).
  ['constant', 10_000, () => 1000.123],
  // Mostly zeros with some latencies: http_req_connecting on reused connections.
  ['zeros and latencies', 20_000, (next) => (next() < 0.9 ? 0 : next() * 3)],
  // A custom Trend around zero: negatives, zeros and positives.
  ['negatives, zeros, positives', 20_000, (next) => (next() < 0.1 ? 0 : (next() - 0.4) * 1e4)],
  // A custom Trend of magnitudes far apart.
  ['tiny to huge', 20_000, (next) => 10 ** (next() * 600 - 300) * (next() < 0.5 ? -1 : 1)],
  // Integers, as sizes and counts are.
  ['integers', 20_000, (next) => Math.floor(next() * 1e6)],
];

test('percentiles stay within 2⁻¹⁰ of k6 exact ones, on the side of zero, over distributions a trend sees', () => {
  for (const [name, count, draw] of DISTRIBUTIONS) {
    const next = random(name.length);
    const sink = new TrendSink();
    const values = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      values[i] = draw(next, i);
      sink.add(values[i]!);
    }
    const sorted = values.slice().sort();
    for (const p of PERCENTILES) {
      const exact = reference(sorted, p);
      const got = sink.percentile(p);
      const bound = RELATIVE_ERROR * Math.max(Math.abs(exact.a), Math.abs(exact.b));
      assert.ok(
        Math.abs(got - exact.value) <= bound * (1 + 1e-12),
        `${name}: p(${p}) = ${got}, k6 ${exact.value}, allowed ±${bound}`,
      );
      if (exact.a >= 0 && exact.b >= 0) assert.ok(got <= exact.value, `${name}: p(${p}) not above k6's`);
      if (exact.a <= 0 && exact.b <= 0) assert.ok(got >= exact.value, `${name}: p(${p}) not below k6's`);
    }
    assert.equal(sink.percentile(0), sorted[0], `${name}: p(0) is min`);
    assert.equal(sink.percentile(100), sorted[count - 1], `${name}: p(100) is max`);
  }
});

test('count, sum, min, max and avg are exact', () => {
  for (const [name, count, draw] of DISTRIBUTIONS) {
    const next = random(name.length + 1);
    const sink = new TrendSink();
    let sum = 0;
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < count; i++) {
      const value = draw(next, i);
      sink.add(value);
      sum += value;
      min = Math.min(min, value);
      max = Math.max(max, value);
    }
    assert.equal(sink.count, count, name);
    assert.equal(sink.sum, sum, name);
    assert.equal(sink.min, min, name);
    assert.equal(sink.max, max, name);
    assert.equal(sink.avg, sum / count, name);
  }
});

test('small trends of round values read as k6 reads them, exactly', () => {
  // Each row: values, percentile, k6's answer.
  for (const [values, p, expected] of [
    [[5, 1, 4, 2, 3], 90, 4.6], // index 3.6 → 4 + 0.6·(5 − 4)
    [[10, 20, 30, 40, 50], 95, 48], // index 3.8 → 40 + 0.8·10
    [[10, 20, 30, 40, 50], 50, 30],
    [[0, 0, 0, 7], 50, 0], // zeros are exact
    [[-3, -1, 2], 50, -1], // a negative is exact too
    [[2.5, 0.25, 1024.5], 50, 2.5], // few significant bits: exact
    [[1234.5678], 99, 1234.5678], // one value: min and max
  ] as const) {
    const sink = new TrendSink();
    for (const value of values) sink.add(value);
    assert.equal(sink.percentile(p), expected, `p(${p}) of ${values.join(',')}`);
  }
  const empty = new TrendSink();
  assert.equal(empty.percentile(95), 0);
  assert.equal(empty.med, 0);
  assert.equal(empty.avg, 0);
  assert.ok(empty.isEmpty);
});

test('a sink answers again after more values arrive', () => {
  const sink = new TrendSink();
  const values: number[] = [];
  const next = random(11);
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 13; i++) {
      const value = Math.floor(next() * 50);
      values.push(value);
      sink.add(value);
    }
    const sorted = Float64Array.from(values).sort();
    assert.equal(sink.percentile(95), reference(sorted, 95).value, `after round ${round}`);
    assert.equal(sink.med, reference(sorted, 50).value);
  }
});

test('merging sinks answers exactly as one sink given all their values', () => {
  const next = random(5);
  const all = new TrendSink();
  const parts = [new TrendSink(), new TrendSink(), new TrendSink()];
  for (let i = 0; i < 30_000; i++) {
    // Integers in µs as ms, so that sums are exact whatever the order of addition.
    const value = Math.floor(Math.exp(3 + 2 * normal(next))) / 1000 - (i % 97 === 0 ? 5 : 0);
    all.add(value);
    parts[i % 3 === 0 ? 0 : next() < 0.8 ? 1 : 2]!.add(value);
  }
  const merged = new TrendSink();
  merged.merge(new TrendSink()); // an empty sink changes nothing, min and max included
  for (const part of parts) merged.merge(part);
  merged.merge(new TrendSink());
  assert.equal(merged.count, all.count);
  assert.equal(merged.min, all.min);
  assert.equal(merged.max, all.max);
  assert.ok(Math.abs(merged.sum - all.sum) <= 1e-9 * Math.abs(all.sum), 'sum, up to rounding');
  for (const p of PERCENTILES) assert.equal(merged.percentile(p), all.percentile(p), `p(${p})`);
  assert.equal(merged.bytes, all.bytes, 'the same pages');
  assert.equal(parts[1]!.count + parts[2]!.count + parts[0]!.count, all.count, 'parts unchanged');
});

test('a sink holds the same bytes after 10 million values as after one million', () => {
  const next = random(3);
  const sink = new TrendSink();
  // Log-uniform from 0.1 ms to 60 s (k6's request timeout): every magnitude a latency
  // takes turns up within the first thousand values, and again and again after.
  const latency = () => 0.1 * 600_000 ** next();
  for (let i = 0; i < 1_000_000; i++) sink.add(latency());
  const afterMillion = sink.bytes;
  for (let i = 0; i < 9_000_000; i++) sink.add(latency());
  assert.equal(sink.count, 10_000_000);
  assert.equal(sink.bytes, afterMillion);
  // k6 would hold 80 MB for these values; 20 powers of two open 20 or 21 pages of 8 KB.
  assert.ok(sink.bytes < 220_000, `${sink.bytes} bytes`);
});

test('a trend sent as data, in changed pages, and merged answers as one sink given every value', () => {
  const next = random(7);
  const [a, b, together] = [new TrendSink(), new TrendSink(), new TrendSink()];
  // b's receiver keeps the newest copy of each page it was sent, as the coordinator does.
  const sent = new Map<number, number>();
  const received = new Map<number, Float64Array>();
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 5_000; i++) {
      const value = Math.exp(Math.log(20) + 0.8 * normal(next));
      (i % 2 === 0 ? a : b).add(value);
      together.add(value);
    }
    const delta = b.state(sent);
    for (const page of delta.pages) received.set(page.key, page.counts);
  }
  const { pages: _, ...stats } = b.state();
  const merged = new TrendSink();
  merged.mergeState(a.state());
  merged.mergeState({ ...stats, pages: [...received].map(([key, counts]) => ({ key, counts })) });
  assert.equal(merged.count, together.count);
  assert.equal(merged.min, together.min);
  assert.equal(merged.max, together.max);
  assert.ok(Math.abs(merged.sum - together.sum) < 1e-6 * together.sum);
  for (const p of PERCENTILES) assert.equal(merged.percentile(p), together.percentile(p), `p(${p})`);
  merged.mergeState(new TrendSink().state());
  assert.equal(merged.count, together.count, 'an empty trend adds nothing');
});

test('counters and rates add across processes; gauges keep min and max and sum or take the larger last value', () => {
  const counter = new CounterSink();
  counter.add(3);
  const other = new CounterSink();
  other.add(4);
  other.add(1);
  mergeSinkState(counter, sinkState(other), 'sum');
  assert.equal(counter.count, 8);

  const rate = new RateSink();
  rate.add(1);
  const otherRate = new RateSink();
  otherRate.add(0);
  otherRate.add(1);
  mergeSinkState(rate, sinkState(otherRate), 'sum');
  assert.deepEqual([rate.passes, rate.total], [2, 3]);

  const gauge = (...values: number[]) => {
    const g = new GaugeSink();
    for (const v of values) g.add(v);
    return g;
  };
  // VUs: each worker's own, summed. Lag: the worst worker's.
  const vus = gauge(5, 12, 10);
  mergeSinkState(vus, sinkState(gauge(2, 7)), 'sum');
  assert.deepEqual([vus.value, vus.min, vus.max], [17, 7, 19], 'min and max bound the sum');
  const lag = gauge(1.5);
  mergeSinkState(lag, sinkState(gauge(0.5, 4)), 'max');
  assert.deepEqual([lag.value, lag.min, lag.max], [4, 0.5, 4]);
  const empty = new GaugeSink();
  mergeSinkState(empty, sinkState(new GaugeSink()), 'sum');
  assert.equal(empty.isEmpty, true, 'an empty gauge merges as nothing');
  mergeSinkState(empty, sinkState(gauge(3)), 'sum');
  assert.deepEqual([empty.value, empty.isEmpty], [3, false]);

  assert.throws(
    () => mergeSinkState(counter, sinkState(rate), 'sum'),
    /a rate cannot merge into a CounterSink/,
  );
});
