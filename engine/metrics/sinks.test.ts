import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selectRank, TrendSink } from './sinks.ts';

/** k6's percentile over a plain sorted copy: the reference the chunked sink must match. */
function reference(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(index);
  const upper = Math.min(sorted.length - 1, lower + 1);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (index - lower);
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

test('TrendSink percentiles are exact across chunk boundaries, duplicates and negative values', () => {
  const next = random(7);
  for (const [count, chunk] of [
    [1, 4],
    [4, 4],
    [5, 4],
    [1000, 16],
    [1237, 100],
    [20_000, 1024],
  ] as const) {
    const sink = new TrendSink(chunk);
    const values: number[] = [];
    for (let i = 0; i < count; i++) {
      // Rounded so that duplicates are common; a third negative.
      const value = Math.round((next() - 0.33) * 200) / 4;
      values.push(value);
      sink.add(value);
    }
    for (const p of [0, 1, 25, 50, 90, 95, 99, 99.9, 100]) {
      assert.equal(sink.percentile(p), reference(values, p), `n=${count} chunk=${chunk} p(${p})`);
    }
    assert.equal(sink.count, count);
    assert.equal(sink.min, Math.min(...values));
    assert.equal(sink.max, Math.max(...values));
  }
});

test('TrendSink answers again after more values arrive (sorted chunks stay valid)', () => {
  const sink = new TrendSink(8);
  const values: number[] = [];
  const next = random(11);
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 13; i++) {
      const value = Math.floor(next() * 50);
      values.push(value);
      sink.add(value);
    }
    assert.equal(sink.percentile(95), reference(values, 95), `after round ${round}`);
    assert.equal(sink.med, reference(values, 50));
  }
});

test('selectRank picks ranks from sorted runs of unequal length, and refuses ranks outside them', () => {
  const runs = [new Float64Array([1, 4, 4, 9]), new Float64Array([]), new Float64Array([2, 4, 10])];
  const all = [1, 2, 4, 4, 4, 9, 10];
  for (const [rank, value] of all.entries()) assert.equal(selectRank(runs, rank), value, `rank ${rank}`);
  assert.throws(() => selectRank(runs, 7), RangeError);
});
