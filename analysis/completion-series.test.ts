import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompletionSeries } from './completion-series.ts';

test('served by window counts what completed in the window, whenever it was sent', () => {
  const series = new CompletionSeries();
  // A queue: 10 requests sent at 100.0–100.9 s, each completing 5 s later, at 105.x.
  for (let i = 0; i < 10; i++) series.add(105 + i / 10 + 0.05, 5000, true);
  const sendStep = series.window(100, 101);
  const later = series.window(105, 106);
  assert.equal(sendStep.ok2xx, 0, 'nothing completed while they were being sent');
  assert.equal(later.ok2xx, 10);
  assert.equal(later.latency.p95 > 4900, true);
  // In flight: 10 requests for ~5 s each; over [101, 105) all ten are in flight.
  assert.ok(Math.abs(series.window(101, 105).inFlightMean - 10) < 0.2);
  assert.equal(series.inFlightAt(103), 10);
  assert.equal(series.inFlightAt(107), 0);
});

test('whole-second stamps are apportioned: a window takes its share of each second', () => {
  const series = new CompletionSeries();
  for (let i = 0; i < 40; i++) series.add(200, 10, true); // 40 responses stamped 200 (ended in [200, 201))
  assert.equal(series.resolutionS, 1);
  assert.equal(series.window(200, 200.5).ok2xx, 20);
  assert.equal(series.window(199, 202).ok2xx, 40);
});

test('failures count as answered, not served', () => {
  const series = new CompletionSeries();
  series.add(10.5, 20, true);
  series.add(10.6, 20, false);
  const w = series.window(10, 11);
  assert.deepEqual([w.answered, w.ok2xx], [2, 1]);
});

test('sends are counted by send time (stamp − duration), whatever the window of their completion', () => {
  const series = new CompletionSeries();
  // 10 requests sent at 100.05, 100.15, … 100.95, each taking 300 ms.
  for (let k = 0; k < 10; k++) series.add(100.05 + k / 10 + 0.3, 300, true);
  assert.equal(series.window(100, 101).sent, 10);
  assert.equal(series.window(100, 101).ok2xx, 7, 'three completed after 101');
  assert.equal(series.window(100.5, 101).sent, 5);
  assert.equal(series.window(101, 102).sent, 0);
});
