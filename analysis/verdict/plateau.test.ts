import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, VerdictCriteria } from '../../contract/index.ts';
import { DEFAULT_CRITERIA } from './criteria.ts';
import { findPlateau } from './plateau.ts';
import { rateRow } from './test-rows.ts';

const criteria = (followingShare: number): VerdictCriteria => ({ ...DEFAULT_CRITERIA, followingShare });

test('the plateau is the first step whose served rate fell below the following share of what was sent', () => {
  const cases: {
    says: string;
    rows: SaturationRow[];
    followingShare?: number;
    plateau: string | null;
  }[] = [
    // 20, 40, 60 served in full: served followed sent throughout.
    { says: 'followed', rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60)], plateau: null },
    // 52 of 60 is 87 %, under 90 %: r060 is the plateau.
    { says: 'below 90 %', rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 52)], plateau: 'r060' },
    // 55 of 60 is 92 %: still following, by the default share.
    { says: 'at 92 %', rows: [rateRow(20, 20), rateRow(60, 55)], plateau: null },
    // 52 of 60 follows when served need only reach 85 % of sent.
    { says: 'a lower share', rows: [rateRow(20, 20), rateRow(60, 52)], followingShare: 0.85, plateau: null },
    // r060 offered 60 but, ramping from 40, sent 50: 47 of those 50 follows (the ramp is not a plateau).
    {
      says: 'against sent, not offered',
      rows: [rateRow(40, 40), rateRow(60, 47, { sentPerSec: 50 })],
      plateau: null,
    },
    // No rate rows at all: nothing to find.
    { says: 'no rows', rows: [], plateau: null },
  ];
  for (const c of cases) {
    const found = findPlateau(c.rows, criteria(c.followingShare ?? DEFAULT_CRITERIA.followingShare));
    assert.equal(found?.row.step ?? null, c.plateau, c.says);
  }
});

test('the served rate at the plateau is the best any valid rate step reached', () => {
  const cases: { says: string; rows: SaturationRow[]; servedPerSec: number }[] = [
    // The plateau's own step served the most: 52 at r060, 50 at r080.
    {
      says: 'the knee served most',
      rows: [rateRow(20, 20), rateRow(60, 52), rateRow(80, 50)],
      servedPerSec: 52,
    },
    // The overloaded step after the knee served more (55 at r080) than the knee (52): 55.
    {
      says: 'a later step served more',
      rows: [rateRow(20, 20), rateRow(60, 52), rateRow(80, 55)],
      servedPerSec: 55,
    },
    // An invalid step's 70/s is not evidence: the best valid one, 52, stands.
    {
      says: 'an invalid step is not counted',
      rows: [rateRow(20, 20), rateRow(60, 52), rateRow(80, 70, { invalid: 'generator CPU reached 97%' })],
      servedPerSec: 52,
    },
    // A step below the plateau served 40 while the plateau's step fell to 30: 40 is what the service held.
    { says: 'a step below served more', rows: [rateRow(40, 40), rateRow(60, 30)], servedPerSec: 40 },
  ];
  for (const c of cases) {
    assert.equal(findPlateau(c.rows, DEFAULT_CRITERIA)?.servedPerSec, c.servedPerSec, c.says);
  }
});

test('the plateau carries its index, the rows from it on, the knee before it and the first step as baseline', () => {
  const rows = [rateRow(20, 20), rateRow(40, 40), rateRow(60, 52), rateRow(80, 53)];
  const found = findPlateau(rows, DEFAULT_CRITERIA)!;
  assert.equal(found.index, 2);
  assert.deepEqual(
    found.beyond.map((r) => r.step),
    ['r060', 'r080'],
  );
  assert.equal(found.knee?.step, 'r040');
  assert.equal(found.baseline.step, 'r020');

  // At the very first step there is no knee, and the baseline is the plateau's own step.
  const atFirst = findPlateau([rateRow(20, 10), rateRow(40, 12)], DEFAULT_CRITERIA)!;
  assert.equal(atFirst.index, 0);
  assert.equal(atFirst.knee, undefined);
  assert.equal(atFirst.baseline.step, 'r020');
  assert.equal(atFirst.beyond.length, 2);
});
