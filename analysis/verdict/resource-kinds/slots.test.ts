import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceStepFigures } from '../../../contract/index.ts';
import { DEFAULT_CRITERIA } from '../criteria.ts';
import { resourceFigures } from '../test-rows.ts';
import { slotsRule } from './slots.ts';

/** HikariCP's pool of 4 connections at one step. */
const pool = (figures: Partial<ResourceStepFigures>) =>
  resourceFigures('hikaricp pool orders', 'slots', 'pool', { capacity: 4, ...figures });

test('a pool is full when its slots are taken and callers queue for them', () => {
  const base = pool({ inUseMean: 1, waitMsMean: 2 });
  const cases: { says: string; now: ResourceStepFigures; saturated: boolean }[] = [
    // 4 of 4 in use and 3 callers waiting on average.
    { says: 'taken, callers waiting', now: pool({ inUseMean: 4, waitingMean: 3 }), saturated: true },
    // 4 of 4 in use and nobody waiting: only busy.
    { says: 'busy, nobody waiting', now: pool({ inUseMean: 4, waitingMean: 0 }), saturated: false },
    // 2 of 4 in use with callers waiting: not the pool's slots they wait for.
    { says: 'half used', now: pool({ inUseMean: 2, waitingMean: 3 }), saturated: false },
    // 3.8 of 4 (95 %) with a wait of 30 ms against 2 ms at the first step: Go's database/sql gives only a wait time.
    { says: 'wait jumped', now: pool({ inUseMean: 3.8, waitMsMean: 30 }), saturated: true },
    // A wait of 1 ms is no queue, however it compares with the first step's.
    { says: 'wait of 1 ms', now: pool({ inUseMean: 4, waitMsMean: 1 }), saturated: false },
    // 4 of 4 and callers refused (timed out waiting): full.
    { says: 'refused', now: pool({ inUseMean: 4, refused: 5 }), saturated: true },
    // 3.4 of 4 (84 %) by once-a-second readings, with 6 waiting on average: every slot was
    // taken whenever they waited (HikariCP behind a full pgbouncer).
    {
      says: 'readings under 90 %, many waiting',
      now: pool({ inUseMean: 3.4, waitingMean: 6 }),
      saturated: true,
    },
    // In use unknown (Debian's pgbouncer exporter): 2 clients waiting say every slot is taken.
    { says: 'in use unknown, waiting', now: pool({ waitingMean: 2 }), saturated: true },
    // In use unknown and half a client waiting: not full.
    { says: 'in use unknown, barely waiting', now: pool({ waitingMean: 0.5 }), saturated: false },
  ];
  for (const c of cases)
    assert.equal(slotsRule.judge(c.now, base, 'r020', DEFAULT_CRITERIA).saturated, c.saturated, c.says);
});

test("a pool's figures in words, with the first step's wait beside them", () => {
  const base = pool({ inUseMean: 1, waitMsMean: 2 });
  const now = pool({ inUseMean: 4, waitingMean: 3, waitingMax: 6, waitMsMean: 310, refused: 5 });
  assert.equal(
    slotsRule.judge(now, base, 'r020', DEFAULT_CRITERIA).text,
    'hikaricp pool orders 4 of 4 connections in use (100%), waiting mean 3, max 6, wait 310 ms (2 ms at r020), 5 refused or timed out',
  );
  // A thread pool counts threads; without a capacity, only the mean in use is said.
  const threads = resourceFigures('executor http', 'slots', 'threads', { inUseMean: 7.5 });
  assert.equal(
    slotsRule.judge(threads, undefined, 'r020', DEFAULT_CRITERIA).text,
    'executor http 7.5 threads in use (capacity unknown)',
  );
});

test("what a request held of a slot at the first step: the meters' own hold time, else in use ÷ served", () => {
  const cases: { says: string; base: ResourceStepFigures; servedPerSec: number; hold: number | null }[] = [
    // HikariCP's usage time: 54 ms, exact.
    { says: 'hold time given', base: pool({ inUseMean: 1, holdMsMean: 54 }), servedPerSec: 20, hold: 0.054 },
    // 1.08 in use at 20/s: 54 ms by Little's Law.
    { says: "Little's Law", base: pool({ inUseMean: 1.08 }), servedPerSec: 20, hold: 0.054 },
    // Nothing in use, nothing served, or in use unknown: no hold time.
    { says: 'none in use', base: pool({ inUseMean: 0 }), servedPerSec: 20, hold: null },
    { says: 'nothing served', base: pool({ inUseMean: 1 }), servedPerSec: 0, hold: null },
    { says: 'in use unknown', base: pool({}), servedPerSec: 20, hold: null },
  ];
  for (const c of cases) {
    const hold = slotsRule.holdPerRequest(c.base, c.servedPerSec);
    assert.equal(hold === null ? null : Math.round(hold * 1e6) / 1e6, c.hold, c.says);
  }
});
