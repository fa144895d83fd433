import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceSecond, ResourceSeries } from '../../contract/index.ts';
import { resourceStepFigures } from './resource-steps.ts';

function second(t: number, figures: Partial<ResourceSecond>): ResourceSecond {
  return {
    t,
    inUse: null,
    capacity: null,
    waiting: null,
    waitMs: null,
    holdMs: null,
    refused: null,
    acquired: null,
    ...figures,
  };
}

function pool(seconds: ResourceSecond[]): ResourceSeries {
  return {
    id: 'hikaricp{pool="orders"}@metrics a',
    name: 'hikaricp pool orders',
    kind: 'slots',
    role: 'pool',
    family: 'hikaricp',
    source: 'metrics a',
    onFull: 'waits',
    position: 1,
    seconds,
  };
}

const SERIES = pool([
  second(99, { inUse: 1, capacity: 4 }), // before the window
  second(100, { inUse: 3, capacity: 4, waiting: 0, waitMs: 0.5, refused: 0, acquired: 60 }),
  second(101, {
    inUse: 4,
    capacity: 4,
    waiting: 6,
    waitMs: 40,
    refused: 2,
    acquired: 80,
    extra: { open: 4 },
  }),
  // second 102 has no reading: absent, not idle
  second(103, { inUse: 4, capacity: 4, waiting: 9, waitMs: null, refused: 1, acquired: 79 }),
  second(104, { inUse: 0, capacity: 4 }), // the window's end is excluded
]);

test('means over the seconds with readings, maxima, utilisation, refusals summed', () => {
  const cases: { window: { startS: number; endS: number }; expected: Record<string, unknown> }[] = [
    // three seconds with readings in [100, 104): 102 absent
    {
      window: { startS: 100, endS: 104 },
      expected: {
        seconds: 3,
        inUseMean: 3.67, // (3 + 4 + 4) / 3
        inUseMax: 4,
        capacity: 4,
        utilisationPct: 91.67, // 3.667 / 4
        waitingMean: 5, // (0 + 6 + 9) / 3
        waitingMax: 9,
        waitMsMean: 20.25, // (0.5 + 40) / 2: 103 had no acquisitions to time
        holdMsMean: null, // no second had it
        refused: 3, // 0 + 2 + 1
        acquiredPerSec: 73, // (60 + 80 + 79) / 3
        extra: { open: 4 }, // only 101 had it
      },
    },
    // a window no reading falls in
    {
      window: { startS: 200, endS: 210 },
      expected: {
        seconds: 0,
        inUseMean: null,
        inUseMax: null,
        capacity: null,
        utilisationPct: null,
        waitingMean: null,
        waitingMax: null,
        waitMsMean: null,
        holdMsMean: null,
        refused: null,
        acquiredPerSec: null,
      },
    },
  ];
  for (const { window, expected } of cases) {
    const figures = resourceStepFigures(SERIES, window);
    const { id, name, kind, role, position, ...rest } = figures;
    assert.deepEqual([id, name, kind, role, position], [SERIES.id, SERIES.name, 'slots', 'pool', 1]);
    assert.deepEqual(rest, expected, JSON.stringify(window));
  }
});

test('an unknown capacity leaves utilisation unknown, not 0 or infinite', () => {
  const unbounded = pool([
    second(10, { inUse: 7, capacity: null }),
    second(11, { inUse: 9, capacity: null }),
  ]);
  const figures = resourceStepFigures(unbounded, { startS: 10, endS: 12 });
  assert.deepEqual([figures.inUseMean, figures.capacity, figures.utilisationPct], [8, null, null]);
});
