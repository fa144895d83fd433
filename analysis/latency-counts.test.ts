// LatencyCounts reads every distribution exactly as the HDR histogram it replaces in the client pass.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LatencyHistogram } from '../lib/latency-histogram.ts';
import { seededRandom } from '../lib/seeded-random.ts';
import { LatencyCounts } from './latency-counts.ts';

function both(values: number[]): { hdr: LatencyHistogram; counts: LatencyCounts } {
  const hdr = new LatencyHistogram();
  const counts = new LatencyCounts();
  for (const ms of values) {
    hdr.record(ms);
    counts.record(ms);
  }
  return { hdr, counts };
}

const rnd = seededRandom(42);
const DISTRIBUTIONS: [string, () => number][] = [
  ['a fast service: 2–12 ms, k6 microsecond decimals', () => 2 + rnd() * 10],
  ['a queue: exponential around 80 ms', () => -80 * Math.log(1 - rnd())],
  ['a long tail: log-uniform 0.01 ms to 20 min', () => 10 ** (-2 + rnd() * 7.08)],
  ['whole milliseconds, many ties', () => Math.floor(rnd() * 400)],
  [
    'timeouts and refusals: 0, 60 s, past the one-hour ceiling',
    () => [0, 60_000, 4_000_000_000][Math.floor(rnd() * 3)]!,
  ],
];

for (const [name, draw] of DISTRIBUTIONS) {
  test(`${name}: the same summary as the HDR histogram`, () => {
    for (const n of [1, 2, 3, 19, 100, 1001, 20_000]) {
      const { hdr, counts } = both(Array.from({ length: n }, draw));
      assert.deepEqual(counts.summary(), hdr.summary(), `${n} values`);
      assert.equal(counts.count, hdr.count);
    }
  });
}

test('every bucket edge (2^k − 1, 2^k, 2^k + 1 µs up to the ceiling) falls where HDR puts it', () => {
  for (let k = 0; k <= 32; k++) {
    for (const us of [2 ** k - 1, 2 ** k, 2 ** k + 1, 3 * 2 ** (k - 1)]) {
      if (us < 0) continue;
      // With a value far below it: the mean, p95 and max read its bucket, p50 the other's.
      const { hdr, counts } = both([0.001, us / 1000]);
      assert.deepEqual(counts.summary(), hdr.summary(), `${us} µs`);
    }
  }
});

test('negative durations count as 0, fractions of a microsecond round as HDR rounds them', () => {
  const { hdr, counts } = both([-5, 0.0004, 0.0005, 0.0015, 1.0005, 2.0485]);
  assert.deepEqual(counts.summary(), hdr.summary());
});

test('adding histograms gives what HDR gives, in any order, and a summary follows each change', () => {
  const parts = [0, 1, 2].map((i) => both(Array.from({ length: 500 * (i + 1) }, DISTRIBUTIONS[i]![1])));
  const hdr = new LatencyHistogram();
  const counts = new LatencyCounts();
  for (const part of [parts[2]!, parts[0]!, parts[1]!]) {
    hdr.add(part.hdr);
    counts.add(part.counts);
    assert.deepEqual(counts.summary(), hdr.summary());
  }
  hdr.record(123.456);
  counts.record(123.456);
  assert.deepEqual(counts.summary(), hdr.summary());
  assert.deepEqual(new LatencyCounts().summary(), new LatencyHistogram().summary());
});

test('encode then decode keeps every count and the max; a damaged encoding is refused', () => {
  const { counts } = both(Array.from({ length: 5000 }, DISTRIBUTIONS[2]![1]));
  const copy = LatencyCounts.decode(JSON.parse(JSON.stringify(counts.encode())));
  assert.ok(copy);
  assert.deepEqual(copy.summary(), counts.summary());
  assert.deepEqual(copy.encode(), counts.encode());
  const encoded = counts.encode();
  assert.equal(
    LatencyCounts.decode([encoded[0]! + 1, ...encoded.slice(1)]),
    undefined,
    'a count that does not add up',
  );
  assert.equal(LatencyCounts.decode([1, 5, 30_000, 1]), undefined, 'an index past the counts');
  assert.equal(LatencyCounts.decode('1,2'), undefined);
  assert.deepEqual(
    LatencyCounts.decode(new LatencyCounts().encode())?.summary(),
    new LatencyCounts().summary(),
  );
});
