import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseSeconds } from './settings.ts';
import { planTags, type RampPlan, rampStages, stepAt, stepTag, totalSeconds } from './steps.ts';

const plan: RampPlan = {
  ratesPerSec: [20, 40, 60, 70, 80, 90, 110],
  holdSeconds: 20,
  rampSeconds: 2,
  recoveryRatePerSec: 50,
  recoverySeconds: 40,
};

test('step tags: r + rate zero-padded to 3 digits, wider rates keep every digit', () => {
  const cases: [number, string][] = [
    [20, 'r020'],
    [70, 'r070'],
    [110, 'r110'],
    [5, 'r005'],
    [1500, 'r1500'], // wider numbers keep all digits
    [2.5, 'r002.5'], // fractional rates keep their decimals
  ];
  for (const [rate, tag] of cases) assert.equal(stepTag(rate), tag);
});

test('stages: per rate a RAMP stage to it and HOLD−RAMP at it, then 1 s down and RECOVERY−1 at the recovery rate', () => {
  const stages = rampStages(plan, formatDuration);
  assert.equal(stages.length, 2 * 7 + 2);
  assert.deepEqual(stages.slice(0, 4), [
    { duration: '2s', target: 20 },
    { duration: '18s', target: 20 },
    { duration: '2s', target: 40 },
    { duration: '18s', target: 40 },
  ]);
  assert.deepEqual(stages.slice(-2), [
    { duration: '1s', target: 50 },
    { duration: '39s', target: 50 },
  ]);
  const total = stages.reduce((sum, s) => sum + (parseSeconds(s.duration) ?? Number.NaN), 0);
  assert.equal(total, totalSeconds(plan));
});

test('stepAt agrees with the stages at every boundary', () => {
  // Walk the stages: at each stage's start, and just before its end, the step must name
  // the rate that stage is heading for (the ramp into a step belongs to that step).
  const stages = rampStages(plan, formatDuration);
  let start = 0;
  const rampEnd = plan.ratesPerSec.length * plan.holdSeconds;
  for (const [i, stage] of stages.entries()) {
    const end = start + (parseSeconds(stage.duration) ?? 0);
    const isRecovery = i >= stages.length - 2;
    const expected = isRecovery ? undefined : stepTag(stage.target);
    if (expected) {
      assert.equal(stepAt(start, plan), expected, `start of stage ${i} (t=${start})`);
      assert.equal(stepAt(end - 1e-6, plan), expected, `end of stage ${i} (t=${end})`);
    }
    start = end;
  }
  assert.equal(stepAt(rampEnd - 1e-6, plan), 'r110', 'the last instant of the last step');
  assert.equal(stepAt(rampEnd, plan), 'drain', 'the ramp ends: drain begins');
  assert.equal(stepAt(rampEnd + 4.999, plan), 'drain', 'drain lasts 5 s');
  assert.equal(stepAt(rampEnd + 5, plan), 'recovery');
  assert.equal(stepAt(totalSeconds(plan) + 100, plan), 'recovery', 'late requests stay in recovery');
  assert.equal(stepAt(-0.5, plan), 'r020', 'clock skew before the start belongs to the first step');
});

test('planTags lists the steps, then drain and recovery', () => {
  assert.deepEqual(planTags(plan), [
    'r020',
    'r040',
    'r060',
    'r070',
    'r080',
    'r090',
    'r110',
    'drain',
    'recovery',
  ]);
});
