import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow } from '../../contract/index.ts';
import { littlesLawChecksOf, poolLittlesLaw } from './littles-law.ts';
import { plateauAt, rateRow, serverFigures } from './test-rows.ts';

/** A step whose pool was measured at `measured` connections checked out, `predicted` by served × mean query time. */
const poolStep = (offered: number, measured: number, predicted: number | null) =>
  rateRow(offered, offered, {
    server: serverFigures({ checkedOutMean: measured, checkedOutPredicted: predicted }),
  });

/** A step whose client had `mean` requests in flight (`atEnd` at its end), `predicted` by completed × mean latency. */
const clientStep = (offered: number, mean: number, atEnd: number, predicted: number | null = mean) =>
  rateRow(offered, offered, { server: null, inFlight: { mean, atEnd, predicted } });

test("Little's Law on the pool, per step: measured checked out against served × mean query time", () => {
  const cases: { says: string; measured: number; predicted: number; agrees: boolean }[] = [
    // 2.0 against 2.2: within 25 %.
    { says: 'within a quarter', measured: 2.0, predicted: 2.2, agrees: true },
    // 2.0 against 3.0: a third off.
    { says: 'a third off', measured: 2.0, predicted: 3.0, agrees: false },
    // 0.3 against 0.7: more than double, but within half a connection, which is all a small pool can tell.
    { says: 'small and close', measured: 0.3, predicted: 0.7, agrees: true },
  ];
  for (const c of cases) {
    const checks = littlesLawChecksOf([poolStep(20, c.measured, c.predicted)]);
    assert.deepEqual(
      checks,
      [
        {
          step: 'r020',
          where: 'pool',
          measured: c.measured,
          predicted: c.predicted,
          steady: true,
          agrees: c.agrees,
        },
      ],
      c.says,
    );
  }
});

test('steps without a prediction, and rows that are not rate steps, are not checked', () => {
  const drain: SaturationRow = { ...poolStep(20, 2, 2), step: 'drain', offeredPerSec: null };
  assert.deepEqual(littlesLawChecksOf([poolStep(20, 2, null), clientStep(40, 5, 5, null), drain]), []);
});

test("Little's Law on the client holds in steady state only: a step whose in flight grew by over a quarter is not judged", () => {
  const checks = littlesLawChecksOf([
    // From 0 to 1 in flight: within a quarter of (at least) 4, steady.
    clientStep(20, 1, 1),
    // From 1 to 10 in flight during the step: the backlog grew, unsteady, though it agrees.
    clientStep(40, 10, 10),
    // From 10 to 11: steady, and 10 measured against 20 predicted disagrees.
    clientStep(60, 10, 11, 20),
  ]);
  assert.deepEqual(
    checks.map((c) => [c.step, c.where, c.steady, c.agrees]),
    [
      ['r020', 'client', true, true],
      ['r040', 'client', false, true],
      ['r060', 'client', true, false],
    ],
  );
});

/** r020, r040, the knee at r060 (81 % of 4 checked out at 59.5/s), the plateau at r070 (62/s, wait p95 `waitP95Ms`). */
function poolRun(waitP95Ms = 190): SaturationRow[] {
  return [
    rateRow(20, 20),
    rateRow(40, 40),
    rateRow(60, 59.5, { server: serverFigures({ checkedOutPct: 81 }) }),
    rateRow(70, 62, { server: serverFigures({ checkedOutPct: 99, waitP95Ms }) }),
  ];
}

test("the pool's ceiling from its hold time below the knee, and the wait a full queue predicts at the plateau", () => {
  const law = poolLittlesLaw(plateauAt(poolRun(), 3), 4, 8, true, false);
  assert.deepEqual(law, {
    holdMsBelowKnee: 54.45, // 0.81 × 4 ÷ 59.5 s
    predictedCeilingPerSec: 73.5, // 4 ÷ 0.05445 s
    holdMsAtPlateau: 64.52, // 4 ÷ 62 s
    predictedQueueWaitMs: 129, // 8 waiting × 64.5 ms ÷ 4 connections
    measuredWaitP95Ms: 190,
    disagreement: null, // 61 ms off is within half the prediction and 20 ms
  });
});

test("a disagreement with Little's Law is named when the pool is the first limit", () => {
  const cases: {
    says: string;
    rows: SaturationRow[];
    plateauServed?: number;
    poolIsLimit?: boolean;
    collapsed?: boolean;
    disagreement: string | null;
  }[] = [
    // Measured 40/s against a predicted 73.5/s ceiling.
    {
      says: 'ceiling',
      rows: poolRun(),
      plateauServed: 40,
      disagreement:
        'predicted ceiling 73.5/s vs measured plateau 40/s: check the instrumentation or what runs between release and the next waiter',
    },
    // The same, when served collapsed: the pool worked, its callers had gone.
    {
      says: 'ceiling, collapsed',
      rows: poolRun(),
      plateauServed: 40,
      collapsed: true,
      disagreement:
        'predicted ceiling 73.5/s vs measured plateau 40/s: the pool kept working near its ceiling, but the callers gave up on much of that work (see overload)',
    },
    // A measured wait of 400 ms against 129 ms predicted with the queue full.
    {
      says: 'wait',
      rows: poolRun(400),
      disagreement: 'predicted wait with the queue full 129 ms vs measured wait p95 400 ms',
    },
    // The pool is not the first limit: its figures are reported, not judged.
    { says: 'not the limit', rows: poolRun(400), plateauServed: 40, poolIsLimit: false, disagreement: null },
  ];
  for (const c of cases) {
    const found = plateauAt(c.rows, 3, c.plateauServed);
    const law = poolLittlesLaw(found, 4, 8, c.poolIsLimit ?? true, c.collapsed ?? false);
    assert.equal(law?.disagreement, c.disagreement, c.says);
  }
});

test('what cannot be predicted is null: no knee, no queue cap, no server figures', () => {
  // The plateau at the first step: no step below it to learn the hold time from.
  const atFirst = poolLittlesLaw(plateauAt(poolRun().slice(3), 0), 4, 8, true, false);
  assert.equal(atFirst?.holdMsBelowKnee, null);
  assert.equal(atFirst?.predictedCeilingPerSec, null);
  assert.equal(atFirst?.holdMsAtPlateau, 64.52);
  // An unbounded queue: no wait predicted for it full.
  assert.equal(poolLittlesLaw(plateauAt(poolRun(), 3), 4, null, true, false)?.predictedQueueWaitMs, null);
  // No GET /steps at the plateau: nothing at all.
  const noServer = poolRun().map((r) => ({ ...r, server: null }));
  assert.equal(poolLittlesLaw(plateauAt(noServer, 3), 4, 8, true, false), null);
});
