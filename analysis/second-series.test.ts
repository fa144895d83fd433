import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LatencySummary } from '../contract/index.ts';
import { type SecondExtras, SecondSeries } from './second-series.ts';

const none: SecondExtras = { latency: new Map(), dropped: new Map(), lagMs: new Map(), cpuPct: new Map() };

test('sent counts by send time, served and failures by completion time', () => {
  const series = new SecondSeries();
  series.addResponse(101.2, 500, 200); // sent 100.7, done 101.2
  series.addResponse(101.9, 2500, 200); // sent 99.4, done 101.9: a queued request
  series.addResponse(102.1, 10, 503); // shed, sent and done in 102
  series.addResponse(102.5, 900, 504); // expired, sent 101.6
  series.addResponse(102.6, 60_000, 0); // a timeout: answered, neither served nor refused
  const seconds = series.seconds(none);
  const at = (t: number) => seconds.find((s) => s.t === t)!;
  // Seconds 42.6 (sent by the timeout) … 102: every one present, zero-filled.
  assert.equal(seconds[0]!.t, 42);
  assert.equal(seconds.at(-1)!.t, 102);
  assert.equal(seconds.length, 61);
  assert.deepEqual(
    [at(99).sent, at(100).sent, at(101).sent, at(102).sent],
    [1, 1, 1, 1],
    'each request counted in the second it was sent',
  );
  assert.deepEqual([at(101).served, at(101).answered], [2, 2], 'both completed in 101, whenever sent');
  assert.deepEqual([at(102).served, at(102).shed, at(102).expired, at(102).answered], [0, 1, 1, 3]);
  assert.equal(at(80).answered, 0);
});

test('gauges and the other collectors are merged by second; missing gauges are null, not 0', () => {
  const series = new SecondSeries();
  series.addResponse(10.5, 20, 200);
  series.addVus(10.1, 4);
  series.addVus(10.9, 6); // the highest of the second
  const latency = new Map<number, LatencySummary>([[10, { count: 1, p50: 20, p95: 20, p99: 20, max: 20 }]]);
  const seconds = series.seconds({
    latency,
    dropped: new Map([[12, 3]]),
    lagMs: new Map([[11, 7.5]]),
    cpuPct: new Map([[10, 40]]),
  });
  assert.deepEqual(
    seconds.map((s) => [s.t, s.p95Ms, s.vus, s.lagMs, s.cpuPct, s.dropped]),
    [
      [10, 20, 6, null, 40, 0],
      [11, null, null, 7.5, null, 0],
      [12, null, null, null, null, 3],
    ],
  );
});

test('nothing seen: no seconds', () => {
  assert.deepEqual(new SecondSeries().seconds(none), []);
});
