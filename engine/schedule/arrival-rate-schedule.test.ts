import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  constantArrivalRateStarts,
  type PlannedStart,
  rampingArrivalRateStarts,
} from './arrival-rate-schedule.ts';
import { ExecutionTuple, parseSegment, parseSequence } from './execution-segment.ts';

const S = 1e9;
const whole = ExecutionTuple.create();
const offsets = (starts: Iterable<PlannedStart>) => [...starts].map((s) => s.offsetNs);

test('constant-arrival-rate: the first start is at 0, one every ⌊timeUnit/rate⌋ ns, end-exclusive', () => {
  // 10/s for 1 s → 0, 100 ms, …, 900 ms: the start at exactly 1 s is not run
  assert.deepEqual(
    offsets(constantArrivalRateStarts({ rate: 10, timeUnitNs: S, durationNs: S }, whole)),
    Array.from({ length: 10 }, (_, k) => k * 100_000_000),
  );
  // 3/s for 1 s → period 333,333,333 ns; ⌈1 s / period⌉ = 4 starts, the last at 999,999,999 ns
  assert.deepEqual(
    offsets(constantArrivalRateStarts({ rate: 3, timeUnitNs: S, durationNs: S }, whole)),
    [0, 333_333_333, 666_666_666, 999_999_999],
  );
  // 1 per minute for 2 min → 0 and 60 s
  assert.deepEqual(
    offsets(constantArrivalRateStarts({ rate: 1, timeUnitNs: 60 * S, durationNs: 120 * S }, whole)),
    [0, 60 * S],
  );
});

test('ramping-arrival-rate: a constant stage starts at 1/rate and excludes the end', () => {
  // startRate 10, 1 s at 10/s → 100 ms, 200 ms, …, 900 ms; the 10th lands exactly at 1 s
  const starts = [
    ...rampingArrivalRateStarts(
      { startRate: 10, timeUnitNs: S, stages: [{ durationNs: S, target: 10 }] },
      whole,
    ),
  ];
  assert.deepEqual(
    starts.map((s) => s.offsetNs),
    Array.from({ length: 9 }, (_, k) => (k + 1) * 100_000_000),
  );
  assert.deepEqual(
    starts.map((s) => s.iterationInTest),
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
  );
});

test('ramping-arrival-rate: a linear ramp starts where the integral reaches each whole number', () => {
  // 0 → 10/s over 1 s: area = 5, t_i = √(2i/10) s; the 5th is at exactly 1 s. The 4th is
  // 894,427,191.0 ns exactly, but k6's float64 formula gives 894,427,190.99… → truncated.
  const starts = offsets(
    rampingArrivalRateStarts({ startRate: 0, timeUnitNs: S, stages: [{ durationNs: S, target: 10 }] }, whole),
  );
  assert.deepEqual(starts, [447_213_595, 632_455_532, 774_596_669, 894_427_190]);
  // 10 → 0 over 1 s: area 5. In exact arithmetic the 5th event is at the end; float64
  // cancellation puts it 12 ns early, so (as in k6, which runs the same float math) it runs.
  // Real k6 v0.49 ran it in 3 runs of 3; an event that close to the end is a race there.
  const down = offsets(
    rampingArrivalRateStarts({ startRate: 10, timeUnitNs: S, stages: [{ durationNs: S, target: 0 }] }, whole),
  );
  assert.deepEqual(down, [105_572_809, 225_403_330, 367_544_467, 552_786_404, 999_999_988]);
});

test('ramping-arrival-rate: stages chain, and a 0-duration stage is an instant jump', () => {
  const stages = [
    { durationNs: 2 * S, target: 20 }, // ramp 0 → 20: area 20
    { durationNs: 0, target: 40 }, // jump to 40
    { durationNs: S, target: 40 }, // 1 s at 40: area 40
  ];
  const starts = offsets(rampingArrivalRateStarts({ startRate: 0, timeUnitNs: S, stages }, whole));
  // 20 events in the ramp (the 20th exactly at 2 s is an interior boundary, so it runs),
  // then 40 at 25 ms spacing after 2 s; the very last at 3 s is excluded.
  assert.equal(starts.length, 20 + 39);
  assert.equal(starts[19], 2 * S);
  assert.equal(starts[20], 2 * S + 25_000_000);
  assert.ok(
    starts.every((t, i) => i === 0 || t >= starts[i - 1]!),
    'monotonic',
  );
});

test('segments: the instances together run exactly the unsplit schedule, at the same times', () => {
  const sequence = parseSequence('0,1/4,1/2,3/4,1');
  const segments = ['0:1/4', '1/4:1/2', '1/2:3/4', '3/4:1'];
  const config = {
    startRate: 5,
    timeUnitNs: S,
    stages: [
      { durationNs: 3 * S, target: 50 },
      { durationNs: 2 * S, target: 50 },
    ],
  };
  const maxVUs = 10;
  const unsplit = [...rampingArrivalRateStarts(config, ExecutionTuple.create().resegmentByValue(maxVUs))];
  const parts = segments.map((s) => [
    ...rampingArrivalRateStarts(
      config,
      ExecutionTuple.create(parseSegment(s), sequence).resegmentByValue(maxVUs),
    ),
  ]);
  const union = parts.flat().sort((a, b) => a.iterationInTest - b.iterationInTest);
  assert.deepEqual(union, unsplit);
  // maxVUs 10 over 4 segments → 3, 3, 2, 2 VUs, so 30/30/20/20 % of the iterations
  const shares = parts.map((p) => p.length / unsplit.length);
  assert.deepEqual(
    shares.map((s) => Math.round(s * 10)),
    [3, 3, 2, 2],
  );
});

test('segments: constant-arrival-rate split two ways adds up to the unsplit run', () => {
  const config = { rate: 100, timeUnitNs: S, durationNs: 2 * S };
  const unsplit = [...constantArrivalRateStarts(config, ExecutionTuple.create())];
  const halves = ['0:1/2', '1/2:1'].map((s) => [
    ...constantArrivalRateStarts(config, ExecutionTuple.create(parseSegment(s)).resegmentByValue(20)),
  ]);
  assert.equal(halves[0]!.length, 100);
  assert.equal(halves[1]!.length, 100);
  assert.deepEqual(
    halves.flat().sort((a, b) => a.iterationInTest - b.iterationInTest),
    unsplit,
  );
});
