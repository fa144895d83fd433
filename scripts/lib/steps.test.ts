import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatDuration, parseSeconds } from './settings.ts';
import {
  planTags,
  type RampPlan,
  rampStages,
  stepAt,
  stepSequenceProblem,
  stepTag,
  stepTags,
  totalSeconds,
} from './steps.ts';

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

test('a rate run again is a repeat with a tag of its own: r040b, then r040c; the probe tags p…', () => {
  const cases: { rates: number[]; prefix?: 'r' | 'p'; tags: string[] }[] = [
    // The climb alone: one tag per rate, as before repeats existed.
    { rates: [20, 40, 60], tags: ['r020', 'r040', 'r060'] },
    // The decisive steps 70 and 80 run again after 90 and after a low 20.
    {
      rates: [20, 40, 70, 80, 20, 70, 90, 80],
      tags: ['r020', 'r040', 'r070', 'r080', 'r020b', 'r070b', 'r090', 'r080b'],
    },
    // A third run is c.
    { rates: [40, 60, 40, 40], tags: ['r040', 'r060', 'r040b', 'r040c'] },
    // The probe's doubling rates.
    { rates: [2, 4, 8, 1500], prefix: 'p', tags: ['p002', 'p004', 'p008', 'p1500'] },
  ];
  for (const c of cases) assert.deepEqual(stepTags(c.rates, c.prefix), c.tags, c.rates.join(','));
});

test('a plan of steps climbs; a lower rate must repeat one already run', () => {
  const cases: { rates: number[]; problem: RegExp | undefined }[] = [
    { rates: [20, 40, 60], problem: undefined }, // climbs
    { rates: [20, 40, 60, 40, 20], problem: undefined }, // repeats of earlier steps
    { rates: [20, 40, 30], problem: /30 is below 40 before it and was not run before/ }, // a new lower rate
    { rates: [20, 20], problem: undefined }, // back to back is allowed by the plan (the study never places it so)
    { rates: [0, 20], problem: /not a positive rate/ },
  ];
  for (const c of cases) {
    const problem = stepSequenceProblem(c.rates);
    if (c.problem) assert.match(problem ?? '', c.problem, c.rates.join(','));
    else assert.equal(problem, undefined, c.rates.join(','));
  }
});

test('stepAt names repeats and the probe prefix by their place in the plan', () => {
  const repeated: RampPlan = { ...plan, ratesPerSec: [20, 70, 90, 20, 70], holdSeconds: 10 };
  // Step k covers [10k, 10k + 10): the fourth step is the second run of 20/s.
  assert.equal(stepAt(35, repeated), 'r020b');
  assert.equal(stepAt(45, repeated), 'r070b');
  assert.equal(stepAt(5, repeated), 'r020');
  assert.deepEqual(planTags(repeated), ['r020', 'r070', 'r090', 'r020b', 'r070b', 'drain', 'recovery']);
  const probe: RampPlan = { ...plan, ratesPerSec: [2, 4, 8], holdSeconds: 3, tagPrefix: 'p' };
  assert.equal(stepAt(4, probe), 'p004');
});
