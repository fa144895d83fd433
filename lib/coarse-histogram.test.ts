import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoarseHistogram } from './coarse-histogram.ts';

test('percentiles are within 4.4 % above the exact nearest-rank value, and never above the largest', () => {
  const cases: { values: number[]; p: number; exact: number }[] = [
    // 1..100 ms: the 95th of 100 values is 95 ms
    { values: Array.from({ length: 100 }, (_, i) => i + 1), p: 95, exact: 95 },
    // one slow request among 19 fast ones: p95 is the 19th value, still fast
    { values: [...Array.from({ length: 19 }, () => 5), 4000], p: 95, exact: 5 },
    // ... and two slow ones make p95 slow
    { values: [...Array.from({ length: 18 }, () => 5), 4000, 4000], p: 95, exact: 4000 },
    // multi-second latencies (a queue that never refuses)
    { values: [1200, 2500, 7300, 9100], p: 50, exact: 2500 },
    // sub-floor values share bucket 0
    { values: [0.01, 0.05, 0.02], p: 95, exact: 0.05 },
  ];
  for (const { values, p, exact } of cases) {
    const h = new CoarseHistogram();
    for (const v of values) h.record(v);
    const got = h.percentile(p)!;
    assert.ok(
      got >= exact - 1e-9 && got <= exact * 1.044 + 1e-9,
      `p${p} of ${values.length}: ${got} vs ${exact}`,
    );
    assert.ok(got <= Math.max(...values));
  }
});

test('empty is null; reset empties it for the next second', () => {
  const h = new CoarseHistogram();
  assert.equal(h.percentile(95), null);
  h.record(8000);
  h.record(9000);
  assert.equal(h.count, 2);
  h.reset();
  assert.equal(h.count, 0);
  assert.equal(h.percentile(95), null);
  h.record(3);
  assert.ok(Math.abs(h.percentile(95)! - 3) < 0.14, 'nothing of the previous second is left');
});

test('values past an hour share the last bucket, read as about an hour (as LatencyHistogram clamps)', () => {
  const h = new CoarseHistogram();
  h.record(10 * 3_600_000);
  const got = h.percentile(50)!;
  assert.ok(got >= 3_600_000 && got <= 3_600_000 * 1.044, String(got));
});
