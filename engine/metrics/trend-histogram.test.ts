import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TrendHistogram } from './trend-histogram.ts';

/** Every rank of `histogram`, in order. */
function ranks(histogram: TrendHistogram, count: number): number[] {
  return Array.from({ length: count }, (_, rank) => histogram.valueAtRank(rank));
}

test('ranks come in value order across signs, zero, subnormals and the ends of the doubles', () => {
  const values = [
    Number.MAX_VALUE,
    -Number.MAX_VALUE,
    5e-324, // the smallest subnormal: reads as 0, its bucket's edge
    -0,
    0,
    1,
    -1,
    2048,
    -2048,
    1e-300,
    -1e300,
    3,
  ];
  const histogram = new TrendHistogram();
  for (const value of values) histogram.record(value);
  const got = ranks(histogram, values.length);
  const sorted = [...values].sort((a, b) => a - b);
  for (const [rank, value] of got.entries()) {
    const exact = sorted[rank]!;
    // The lower edge in magnitude: never farther from zero, at most 2⁻¹⁰ nearer.
    assert.ok(Math.abs(value) <= Math.abs(exact), `rank ${rank}: ${value} for ${exact}`);
    assert.ok(Math.abs(exact) - Math.abs(value) <= Math.abs(exact) * 2 ** -10 + 5e-324, `rank ${rank}`);
  }
  // Values of at most 11 significant bits are their bucket's edge.
  for (const exact of [-2048, -1, 0, 1, 3, 2048])
    assert.ok(got.includes(exact), `${exact} read back exactly`);
  assert.throws(() => histogram.valueAtRank(values.length), RangeError);
});

test('a bucket is 2⁻¹⁰ of its power of two wide: between 512 and 1,024, half a unit', () => {
  const histogram = new TrendHistogram();
  histogram.record(1000);
  histogram.record(1000.49); // the same bucket, [1000, 1000.5): reads as 1000
  histogram.record(1001.95); // three buckets on, [1001.5, 1002)
  histogram.record(1001.5);
  assert.deepEqual(ranks(histogram, 4), [1000, 1000, 1001.5, 1001.5]);
});

test('merging adds counts bucket by bucket, opening pages it lacks', () => {
  const a = new TrendHistogram();
  const b = new TrendHistogram();
  for (const value of [1, 2, 3]) a.record(value);
  for (const value of [-7, 2, 1e6]) b.record(value);
  const emptyBytes = new TrendHistogram().bytes;
  a.merge(b);
  assert.deepEqual(ranks(a, 6), [-7, 1, 2, 2, 3, 999936]); // 1e6 reads as its edge, 2⁻¹⁰ below at most
  assert.deepEqual(ranks(b, 3), [-7, 2, 999936], 'the other is unchanged');
  // 1 (2⁰), 2 and 3 (2¹), −7 and 1e6 open four pages of 1,025 float64 counts.
  assert.equal(a.bytes - emptyBytes, 4 * 1025 * 8);
});

test('pages() with a record of what was sent gives only the pages changed since, and addPage rebuilds the histogram', () => {
  const source = new TrendHistogram();
  const copy = new TrendHistogram();
  const sent = new Map<number, number>();
  // A receiver keeps the newest copy of each page, as the engine's coordinator does.
  const mirror = new Map<number, Float64Array>();
  const receive = () => {
    for (const page of source.pages(sent)) mirror.set(page.key, page.counts);
  };
  for (const value of [1, 1.5, 3, 100]) source.record(value);
  receive();
  assert.equal(mirror.size, 3, '1 and 1.5 share the page of [1, 2); 3 and 100 open two more');
  source.record(1.25);
  const changed = source.pages(sent);
  assert.equal(changed.length, 1, 'only the page of [1, 2) changed');
  assert.equal(changed[0]!.counts[1024], 3, 'its total: 1, 1.25 and 1.5');
  assert.deepEqual(source.pages(sent), [], 'nothing changed since');
  for (const page of source.pages()) copy.addPage(page);
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((rank) => copy.valueAtRank(rank)),
    [0, 1, 2, 3, 4].map((rank) => source.valueAtRank(rank)),
  );
  assert.throws(() => copy.addPage({ key: 4096, counts: new Float64Array(1025) }), RangeError);
  assert.throws(() => copy.addPage({ key: 1, counts: new Float64Array(3) }), RangeError);
});
