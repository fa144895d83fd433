import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceStepFigures } from '../../../contract/index.ts';
import { DEFAULT_CRITERIA } from '../criteria.ts';
import { resourceFigures } from '../test-rows.ts';
import { queueRule } from './queue.ts';

/** An executor's queue at one step: its depth is its "in use". */
const queue = (figures: Partial<ResourceStepFigures>) =>
  resourceFigures('executor http queue', 'queue', 'queue', figures);

test('a bounded queue is full at its cap; an unbounded one when it grows to five times its first depth', () => {
  const cases: { says: string; now: ResourceStepFigures; base?: ResourceStepFigures; saturated: boolean }[] =
    [
      // Depth reached its cap of 100 at its deepest.
      { says: 'at its cap', now: queue({ inUseMean: 60, inUseMax: 100, capacity: 100 }), saturated: true },
      // Deepest 90 of 100: not full.
      { says: 'below its cap', now: queue({ inUseMean: 60, inUseMax: 90, capacity: 100 }), saturated: false },
      // Below its cap, but it refused work.
      {
        says: 'refused',
        now: queue({ inUseMean: 10, inUseMax: 20, capacity: 100, refused: 3 }),
        saturated: true,
      },
      // Unbounded, 6 deep where the first step had none (at least 1, and 5 × 0.2): growing.
      {
        says: 'unbounded, grown',
        now: queue({ inUseMean: 6 }),
        base: queue({ inUseMean: 0 }),
        saturated: true,
      },
      // Unbounded, under one deep: nothing waits in it to speak of.
      {
        says: 'unbounded, shallow',
        now: queue({ inUseMean: 0.8 }),
        base: queue({ inUseMean: 0 }),
        saturated: false,
      },
      // Unbounded, 3 deep where the first step had 1: it did not grow fivefold.
      {
        says: 'unbounded, as deep as before',
        now: queue({ inUseMean: 3 }),
        base: queue({ inUseMean: 1 }),
        saturated: false,
      },
    ];
  for (const c of cases)
    assert.equal(queueRule.judge(c.now, c.base, 'r020', DEFAULT_CRITERIA).saturated, c.saturated, c.says);
});

test("a queue's depth in words, with its cap and the first step's depth", () => {
  const bounded = queue({ inUseMean: 60, inUseMax: 100, capacity: 100, refused: 3 });
  assert.equal(
    queueRule.judge(bounded, queue({ inUseMean: 0.5 }), 'r020', DEFAULT_CRITERIA).text,
    'executor http queue depth mean 60, max 100 of 100 (0.5 at r020), 3 refused',
  );
  assert.equal(
    queueRule.judge(queue({ inUseMean: 6 }), undefined, 'r020', DEFAULT_CRITERIA).text,
    'executor http queue depth mean 6, max 6 (unbounded)',
  );
});

test('a queue holds nothing per request (its requests wait), so it predicts no ceiling', () => {
  assert.equal(queueRule.holdPerRequest(queue({ inUseMean: 5, capacity: 100 }), 20), null);
});
