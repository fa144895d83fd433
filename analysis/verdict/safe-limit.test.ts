import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow } from '../../contract/index.ts';
import { passedAtPlateau, safeStepOf } from './safe-limit.ts';
import { rateRow } from './test-rows.ts';

const objectives = { p95Ms: 250, failRate: 0.01 };
const p95 = (ms: number) => ({ latencyMs: { med: ms / 2, p95: ms, p99: ms, max: ms } });

test('the safe limit is the highest step, counting up from the first, that met the objectives', () => {
  const cases: { says: string; rows: SaturationRow[]; safe: string | undefined }[] = [
    // Every step met p95 < 250 ms and < 1 % failing: the last one.
    { says: 'all met', rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60)], safe: 'r060' },
    // r060's p95 of 300 ms breaks the objective: r040.
    { says: 'p95 over', rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60, p95(300))], safe: 'r040' },
    // A p95 of exactly 250 ms does not meet "under 250 ms".
    { says: 'p95 at the objective', rows: [rateRow(20, 20), rateRow(40, 40, p95(250))], safe: 'r020' },
    // 1 % failing does not meet "under 1 %".
    {
      says: 'failures at the budget',
      rows: [rateRow(20, 20), rateRow(40, 40, { failureRate: 0.01 })],
      safe: 'r020',
    },
    // 0.5 % failing is within the budget.
    {
      says: 'failures within',
      rows: [rateRow(20, 20), rateRow(40, 40, { failureRate: 0.005 })],
      safe: 'r040',
    },
    // One dropped start at r040: the service was not given that load, so r040 is not safe.
    {
      says: 'drops',
      rows: [rateRow(20, 20), rateRow(40, 40, { dropped: 1 }), rateRow(60, 60)],
      safe: 'r020',
    },
    // An invalid r040 stops the count, though r060 after it met the objectives.
    {
      says: 'invalid row',
      rows: [rateRow(20, 20), rateRow(40, 40, { invalid: 'generator CPU reached 97%' }), rateRow(60, 60)],
      safe: 'r020',
    },
    // The first step already missed: no safe limit.
    { says: 'first missed', rows: [rateRow(20, 20, p95(400)), rateRow(40, 40)], safe: undefined },
    // No rate steps: no safe limit.
    { says: 'no rows', rows: [], safe: undefined },
  ];
  for (const c of cases) assert.equal(safeStepOf(c.rows, objectives)?.step, c.safe, c.says);
});

test('the safe limit is never at or above the plateau, though a step there met the objectives for one hold', () => {
  const rows = [
    rateRow(20, 20),
    rateRow(40, 40),
    rateRow(60, 60),
    rateRow(80, 78.9, p95(183.8)),
    rateRow(100, 78),
  ];
  const cases: {
    says: string;
    plateau: { index: number; servedPerSec: number } | null;
    safe: string | undefined;
  }[] = [
    // A JVM service's plateau: 78.9/s served from r080, whose p95 of 184 ms met the objective: r060.
    { says: 'the plateau step', plateau: { index: 3, servedPerSec: 78.9 }, safe: 'r060' },
    // A plateau at r100 that held only 59/s: r060 offered more than that, so r040.
    { says: 'offered above the plateau', plateau: { index: 4, servedPerSec: 59 }, safe: 'r040' },
    // No plateau given: every step that met the objectives counts, up to r100.
    { says: 'no plateau', plateau: null, safe: 'r100' },
  ];
  for (const c of cases) assert.equal(safeStepOf(rows, objectives, c.plateau)?.step, c.safe, c.says);
});

test('the step left out for being at the plateau is named, so the record can say why the safe limit is lower', () => {
  const rows = [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60), rateRow(80, 78.9, p95(183.8))];
  const safe = safeStepOf(rows, objectives, { index: 3, servedPerSec: 78.9 });
  assert.equal(passedAtPlateau(rows, objectives, safe)?.step, 'r080');
  // A plateau step that missed the objectives anyway is no news.
  const missed = [rateRow(20, 20), rateRow(40, 40), rateRow(60, 60), rateRow(80, 70, p95(400))];
  assert.equal(
    passedAtPlateau(missed, objectives, safeStepOf(missed, objectives, { index: 3, servedPerSec: 70 })),
    undefined,
  );
});
