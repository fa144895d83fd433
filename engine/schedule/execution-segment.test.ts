import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isPlateauError } from '../../contract/index.ts';
import { ExecutionTuple, parseSegment, parseSequence } from './execution-segment.ts';

const quarters = parseSequence('0,1/4,1/2,3/4,1');
const tuple = (segment: string, sequence = quarters) =>
  ExecutionTuple.create(parseSegment(segment), sequence);

test('segments parse as fractions, percentages or decimals; a single value means 0:x', () => {
  const same = ['0:1/4', '0%:25%', '0:0.25', '1/4'].map((s) => tuple(s).stripedOffsets());
  for (const offsets of same) assert.deepEqual(offsets, same[0]);
  for (const bad of ['1/2:1/4', '0:2', 'a:b', '0:1:2', '1/0']) {
    assert.throws(
      () => parseSegment(bad),
      (e: unknown) => isPlateauError(e) && e.code === 'PLATEAU_INVALID_CONFIG',
      bad,
    );
  }
  for (const bad of ['0,1/2', '1/4,1', '0,1/2,1/4,1', '0,x,1']) {
    assert.throws(
      () => parseSequence(bad),
      (e: unknown) => isPlateauError(e),
      bad,
    );
  }
  assert.throws(() => ExecutionTuple.create(parseSegment('0:1/3'), quarters), /not one of the segments/);
});

test('equal quarters stripe round-robin: 0,1,2,3 then every 4th', () => {
  for (const [i, segment] of ['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1'].entries()) {
    assert.deepEqual(tuple(segment).stripedOffsets(), { start: i, gaps: [4], lcd: 4 });
  }
});

test('every element of a block belongs to exactly one segment, in proportion to its length', () => {
  const sequence = parseSequence('0,0.3,0.5,0.6,0.7,0.8,0.9,1');
  const t = ExecutionTuple.create(parseSegment('0:0.3'), sequence);
  const owners = new Map<number, number>();
  for (let i = 0; i < t.segments.length; i++) {
    const { start, gaps, lcd } = t.stripedOffsets(i);
    assert.equal(
      gaps.reduce((a, b) => a + b, 0),
      lcd,
      'gaps cycle over one block',
    );
    let e = start;
    for (const gap of gaps) {
      assert.equal(owners.has(e), false, `element ${e} owned twice`);
      owners.set(e, i);
      e += gap;
    }
  }
  assert.equal(owners.size, t.lcd);
  const counts = t.segments.map((_, i) => [...owners.values()].filter((o) => o === i).length);
  assert.deepEqual(counts, [3, 2, 1, 1, 1, 1, 1]);
});

test('ScaleInt64 splits integers exactly, never by uniform rounding', () => {
  const scale = (v: number) => ['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1'].map((s) => tuple(s).scale(v));
  assert.deepEqual(scale(1), [1, 0, 0, 0]); // maxVUs 1 over 4 segments
  assert.deepEqual(scale(10), [3, 3, 2, 2]);
  assert.deepEqual(scale(7), [2, 2, 2, 1]);
  for (const v of [0, 1, 5, 13, 100, 1001]) {
    assert.equal(
      scale(v).reduce((a, b) => a + b, 0),
      v,
      `shares of ${v} add up`,
    );
  }
  assert.equal(ExecutionTuple.create().scale(17), 17, 'unsplit: the value itself');
});

test('re-segmenting by maxVUs follows the VU split; a segment with no VUs has no work', () => {
  const t = tuple('0:1/4').resegmentByValue(10);
  assert.equal(t.segments.length, 4);
  assert.deepEqual(t.stripedOffsets().lcd, 10);
  assert.equal(t.stripedOffsets().gaps.length, 3, '3 of every 10 iterations');
  assert.equal(tuple('1/4:1/2').hasWork(1), false);
  assert.throws(() => tuple('1/4:1/2').resegmentByValue(1), /gets none of 1 VUs/);
});
