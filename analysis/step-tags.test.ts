import assert from 'node:assert/strict';
import { test } from 'node:test';
import { stepTags } from '../scripts/lib/steps.ts';
import { isProbeTag, offeredFromTag, planIndexOfTag, repeatOf } from './step-tags.ts';

test('a rate step tag names its rate, a repeat and the probe included', () => {
  const cases: [string, number | null, string | null, boolean][] = [
    // tag, offered, the step it repeats, a probe step
    ['r020', 20, null, false],
    ['r002.5', 2.5, null, false],
    ['r1500', 1500, null, false],
    ['r070b', 70, 'r070', false], // the second run of 70/s
    ['r070c', 70, 'r070', false], // the third
    ['p016', 16, null, true], // a step of the probe of --find
    ['drain', null, null, false],
    ['c008', null, null, false],
    ['r070a', null, null, false], // a is not a repeat letter (b is the second run)
  ];
  for (const [tag, offered, repeats, probe] of cases) {
    assert.equal(offeredFromTag(tag), offered, tag);
    assert.equal(repeatOf(tag), repeats, tag);
    assert.equal(isProbeTag(tag), probe, tag);
  }
});

test("a tag's place in the plan: a repeat is its rate's later run; the tags the scripts write are found where they ran", () => {
  const rates = [20, 40, 70, 80, 20, 70, 90, 80];
  assert.equal(planIndexOfTag('r070', rates), 2);
  assert.equal(planIndexOfTag('r070b', rates), 5);
  assert.equal(planIndexOfTag('r080b', rates), 7);
  assert.equal(planIndexOfTag('r090b', rates), -1, 'no second run of 90/s');
  assert.equal(planIndexOfTag('r050', rates), -1);
  assert.equal(planIndexOfTag('drain', rates), -1);
  // What scripts/lib/steps.ts writes, analysis reads back at the same place.
  for (const [index, tag] of stepTags(rates).entries()) assert.equal(planIndexOfTag(tag, rates), index, tag);
  for (const [index, tag] of stepTags([2, 4, 8], 'p').entries())
    assert.equal(planIndexOfTag(tag, [2, 4, 8]), index);
});
