import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  findingWords,
  LAYOUTS,
  type PlacedSteps,
  placeSteps,
  planProbe,
  predictDecisive,
  ratesAround,
  repeatWords,
  withRepeats,
} from './step-placement.ts';

test('the probe doubles from 2/s for as many steps as 40 % of the budget holds', () => {
  const cases: { budget: number; top: number; hold: number; cut: boolean }[] = [
    { budget: 60, top: 256, hold: 3, cut: true }, // 24 s ÷ 3 s = 8 steps: 2 … 256/s
    { budget: 90, top: 4096, hold: 3, cut: true }, // 36 s ÷ 3 s = 12 steps: 2 … 4,096/s
    { budget: 300, top: 16_384, hold: 4, cut: false }, // 120 s ÷ 4 s = 30 steps, more than the 14 to 16,384/s
  ];
  for (const c of cases) {
    const plan = planProbe(c.budget);
    assert.equal(plan.ratesPerSec[0], 2, `${c.budget}`);
    assert.equal(plan.ratesPerSec.at(-1), c.top, `${c.budget}`);
    assert.equal(plan.holdSeconds, c.hold, `${c.budget}`);
    assert.equal(plan.cutByBudget, c.cut, `${c.budget}`);
    assert.ok(plan.ratesPerSec.every((r, i) => i === 0 || r === 2 * plan.ratesPerSec[i - 1]!));
    assert.ok(plan.ratesPerSec.length * plan.holdSeconds <= c.budget * 0.4, `${c.budget}: within 40 %`);
  }
});

test('steps around a knee: whole, climbing, and lifted apart where a small knee rounds them together', () => {
  // A knee at 72/s: coarse 22, 40; fine 54, 61, 67 below and 90 past; then 104, 122.
  assert.deepEqual(ratesAround(72, LAYOUTS.full), [22, 40, 54, 61, 67, 90, 104, 122]);
  // A knee at 5/s: 1.5 → 2, 2.75 → 3, 3.75 → 4, 4.25 → 4 lifted to 5, 4.65 → 5 lifted to 6, …
  assert.deepEqual(ratesAround(5, LAYOUTS.full), [2, 3, 4, 5, 6, 7, 8, 9]);
});

test('the decisive steps predicted: the first the knee serves under 90 % of, and the one below it', () => {
  const steps = [22, 40, 58, 65, 70, 83, 97, 115];
  // 83 × 0.9 = 74.7 > 72: the plateau rule finds served below sent there first.
  assert.deepEqual(predictDecisive(steps, 72, 0.9), { below: 70, plateau: 83 });
  // A knee past every step: the last one is the one below, no plateau is predicted.
  assert.deepEqual(predictDecisive(steps, 200, 0.9), { below: 115, plateau: null });
  // A knee below the first step.
  assert.deepEqual(predictDecisive(steps, 10, 0.9), { below: null, plateau: 22 });
});

test('repeats run later, never back to back: a low step, the step below, the steps past, the plateau', () => {
  const cases: {
    says: string;
    steps: number[];
    decisive: { below: number | null; plateau: number | null };
    sequence: number[];
  }[] = [
    {
      says: 'placed',
      steps: [22, 40, 58, 65, 70, 83, 97, 115],
      decisive: { below: 70, plateau: 83 },
      sequence: [22, 40, 58, 65, 70, 83, 22, 70, 97, 115, 83],
    },
    // The plateau is the last step: its repeat follows the repeat below it.
    {
      says: 'plateau last',
      steps: [20, 40, 60],
      decisive: { below: 40, plateau: 60 },
      sequence: [20, 40, 60, 20, 40, 60],
    },
    // The step below is the lowest: no separate low step.
    {
      says: 'below is lowest',
      steps: [20, 40, 60],
      decisive: { below: 20, plateau: 40 },
      sequence: [20, 40, 20, 60, 40],
    },
    // No plateau predicted: the last step again, after the low one.
    {
      says: 'no plateau',
      steps: [20, 40, 60],
      decisive: { below: 60, plateau: null },
      sequence: [20, 40, 60, 20, 60],
    },
    // The plateau at the first step: it runs again at the end.
    {
      says: 'plateau first',
      steps: [20, 40, 60],
      decisive: { below: null, plateau: 20 },
      sequence: [20, 40, 60, 20],
    },
  ];
  for (const c of cases) {
    const sequence = withRepeats(c.steps, c.decisive);
    assert.deepEqual(sequence, c.sequence, c.says);
    assert.ok(
      sequence.every((rate, i) => i === 0 || rate !== sequence[i - 1]),
      `${c.says}: no step runs back to back with its repeat`,
    );
  }
  assert.equal(
    repeatWords([22, 40, 58, 65, 70, 83, 22, 70, 97, 115, 83], { below: 70, plateau: 83 }),
    'r070b after r022b, r083b after r115',
  );
});

test('placement fits the budget: the full layout with holds as long as fit, else the short one, else a shortfall', () => {
  const place = (leftSeconds: number, given = {}) =>
    placeSteps({ kneePerSec: 38.5, leftSeconds, repeat: true, followingShare: 0.9, given });
  // 5 minutes less a probe: 11 steps of 19 s and a 38 s recovery.
  const long = place(250) as PlacedSteps;
  assert.equal(long.sequence.length, 11);
  assert.equal(long.holdSeconds, 19);
  assert.equal(long.recoverySeconds, 38);
  assert.equal(long.rampSeconds, 2);
  assert.deepEqual(long.firstPass, [12, 21, 29, 33, 36, 48, 56, 65]);
  assert.deepEqual(long.decisive, { below: 36, plateau: 48 });
  assert.equal(long.recoveryRatePerSec, 21, 'the second step, about half the knee');
  // A 90 s budget's leftovers: 11 steps of 4 s and an 8 s recovery = 52 s.
  const short = place(60) as PlacedSteps;
  assert.equal(short.holdSeconds, 4);
  assert.equal(short.rampSeconds, 1);
  assert.ok(short.sequence.length * short.holdSeconds + short.recoverySeconds <= 60);
  // Only the short layout fits: 6 steps and 3 repeats of 3 s, and 6 s of recovery = 33 s.
  const shortest = place(35) as PlacedSteps;
  assert.equal(shortest.firstPass.length, 6);
  assert.equal(shortest.sequence.length, 9);
  assert.equal(shortest.holdSeconds, 3);
  // Not even that.
  assert.deepEqual(place(20), { neededSeconds: 33, leftSeconds: 20 });
  // A given hold is kept, and the layout fitted to it.
  assert.equal((place(250, { holdSeconds: 10 }) as PlacedSteps).holdSeconds, 10);
  assert.deepEqual(place(250, { holdSeconds: 30 }), { neededSeconds: 9 * 30 + 40, leftSeconds: 250 });
  // Without repeats, the first pass alone.
  const once = placeSteps({
    kneePerSec: 38.5,
    leftSeconds: 250,
    repeat: false,
    followingShare: 0.9,
  }) as PlacedSteps;
  assert.deepEqual(once.sequence, once.firstPass);
});

test("the record's steps line says how they were chosen", () => {
  const words = findingWords({
    placedBy: 'probe',
    probeTags: ['p002', 'p004', 'p008', 'p016', 'p032', 'p064'],
    probeHoldSeconds: 3,
    stopWords: 'stopped at p064: served 38.5/s of 64/s sent',
    kneePerSec: 38.5,
    firstPass: [12, 21, 31, 35, 37, 44, 52, 62],
    sequence: [12, 21, 31, 35, 37, 44, 12, 37, 52, 62, 44],
    decisive: { below: 37, plateau: 44 },
  });
  assert.equal(
    words,
    'a probe (p002–p064, 3 s each; stopped at p064: served 38.5/s of 64/s sent) placed 12, 21, 31, 35, 37, 44, 52, 62/s around a knee near 38.5/s: coarse below, fine across, two past; run again: r037b after r012b, r044b after r062',
  );
});

test('given steps: the step below is the last offered under the knee, not one between the knee and the plateau', () => {
  // A knee at 38/s: 40 follows (38 of 40 sent) but is at the plateau, never safe; 30 is the safe limit's.
  assert.deepEqual(predictDecisive([10, 20, 30, 40, 50, 60], 38.3, 0.9), { below: 30, plateau: 50 });
  // No step under the knee.
  assert.deepEqual(predictDecisive([40, 50], 38.3, 0.9), { below: null, plateau: 50 });
});
