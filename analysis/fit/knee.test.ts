// The knee of served against offered: synthetic curves with known knees, then real studies' tables.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KneeResult } from '../../contract/index.ts';
import { fitKnee, type KneePoint } from './knee.ts';

const steps = (rows: [number, number][]): KneePoint[] =>
  rows.map(([offeredPerSec, servedPerSec]) => ({ offeredPerSec, servedPerSec }));

/** The fit as a knee, or a failed assertion naming what it was instead. */
function kneeOf(result: KneeResult, says: string) {
  assert.equal(result.kind, 'knee', `${says}: ${JSON.stringify(result)}`);
  if (result.kind !== 'knee') throw new Error('unreachable');
  return result;
}

function near(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: ${actual}, expected ${expected} ± ${tolerance}`,
  );
}

test('synthetic curves: the knee is where the lines meet, with the slope past it', () => {
  const cases: {
    says: string;
    rows: [number, number][];
    knee: number;
    served: number;
    slopePast: number;
  }[] = [
    // served = min(x, 50): a plateau at 50/s, the knee between the 40 and 60 steps.
    {
      says: 'flat',
      rows: [20, 30, 40, 60, 80, 100].map((x) => [x, Math.min(x, 50)]),
      knee: 50,
      served: 50,
      slopePast: 0,
    },
    // Follows to 54.3/s, then loses 0.75/s of served per offered/s: a collapse.
    {
      says: 'collapse',
      rows: [
        [20, 20],
        [40, 40],
        [60, 50],
        [80, 35],
        [100, 20],
      ],
      knee: 54.29,
      served: 54.29,
      slopePast: -0.75,
    },
    // 95 % of offered served below (the steps' ramps), flat at 38/s past 40/s offered.
    {
      says: 'slope below 0.95',
      rows: [10, 20, 30, 50, 60, 70].map((x) => [x, Math.min(0.95 * x, 38)]),
      knee: 40,
      served: 38,
      slopePast: 0,
    },
  ];
  for (const c of cases) {
    const knee = kneeOf(fitKnee(steps(c.rows)), c.says);
    near(knee.offeredPerSec, c.knee, 0.01, `${c.says}: knee`);
    near(knee.servedPerSec, c.served, 0.01, `${c.says}: served at the knee`);
    near(knee.slopePast, c.slopePast, 1e-6, `${c.says}: slope past`);
    assert.equal(knee.warning, null, c.says);
  }
});

test('a study shaped like a real one: served follows offered to 70/s, then flat at ~72', () => {
  // The seed's steps, 20 to 110/s; served a little under offered below the knee (each step's
  // window starts in its ramp from the last), then flat at 72 ± 0.3.
  const knee = kneeOf(
    fitKnee(
      steps([
        [20, 19.8],
        [30, 29.7],
        [40, 39.7],
        [50, 49.6],
        [60, 59.4],
        [70, 69.3],
        [80, 72.1],
        [90, 71.8],
        [100, 72.3],
        [110, 71.9],
      ]),
    ),
    'hand-built',
  );
  // The lines meet at 72.0/s served ÷ 0.991 served per offered = 72.7/s offered: between the
  // 70 and 80 steps, where the measured plateau's step (r080) is.
  near(knee.offeredPerSec, 72.7, 0.2, 'knee');
  near(knee.servedPerSec, 72.0, 0.2, 'served at the knee');
  near(knee.slopeBelow, 0.99, 0.01, 'slope below');
  near(knee.slopePast, 0, 0.02, 'slope past');
  assert.equal(knee.slopePastAssumed, false);
  assert.deepEqual([knee.stepsBelow, knee.stepsPast], [6, 4]);
  assert.ok(knee.rSquared > 0.999, `R² ${knee.rSquared}`);
  assert.equal(knee.warning, null);
});

test("the reference study's published table (docs/capacity-study.md, queueing): the knee at its ~70/s plateau", () => {
  // Reference figures, `npx plateau run --set SHED=off`, embedded engine: r020 … r110 served/s.
  const knee = kneeOf(
    fitKnee(
      steps([
        [20, 19.3],
        [60, 59.0],
        [70, 69.2],
        [80, 69.7],
        [90, 69.7],
        [110, 70.6],
      ]),
    ),
    'reference queueing',
  );
  // Between the r070 and r080 steps, serving what r070 served: the plateau rule's ~70/s.
  near(knee.offeredPerSec, 70.3, 0.7, 'knee');
  near(knee.servedPerSec, 69.3, 0.3, 'served at the knee');
  assert.ok(knee.slopePast >= 0 && knee.slopePast < 0.05, `slope past ${knee.slopePast}`);
  assert.equal(knee.warning, null);
});

test('one step past the knee: the plateau is held flat, and the knee is what it served over the slope below', () => {
  // render.test.ts's rows: r080 is invalid and left out, so r070 alone lies past the knee.
  const knee = kneeOf(
    fitKnee(
      steps([
        [20, 20],
        [40, 39.9],
        [60, 59.1],
        [70, 61.8],
      ]),
    ),
    'one past',
  );
  assert.equal(knee.slopePastAssumed, true);
  assert.equal(knee.slopePast, 0);
  near(knee.servedPerSec, 61.8, 1e-6, 'served at the knee');
  near(knee.offeredPerSec, 61.8 / knee.slopeBelow, 1e-6, 'knee');
  assert.deepEqual([knee.stepsBelow, knee.stepsPast], [3, 1]);
});

test('no knee: served followed throughout, bent without stopping, or never followed', () => {
  const straight = fitKnee(
    steps([
      [20, 20],
      [40, 40],
      [60, 60],
      [80, 80],
    ]),
  );
  assert.deepEqual(straight, {
    kind: 'none',
    slope: 1,
    reason: 'served followed offered to the last step (1 served per offered)',
  });
  // Past 40/s served still gains 0.7 per offered: a bend, not a plateau.
  const bend = fitKnee(
    steps([10, 20, 30, 40, 60, 80, 100].map((x) => [x, x <= 40 ? x : 40 + 0.7 * (x - 40)])),
  );
  assert.equal(bend.kind, 'none');
  assert.match(bend.kind === 'none' ? bend.reason : '', /bent but did not stop following: past 40\/s/);
  const nothing = fitKnee(
    steps([
      [20, 0],
      [40, 0],
      [60, 0],
    ]),
  );
  assert.equal(nothing.kind, 'none');
  assert.match(nothing.kind === 'none' ? nothing.reason : '', /did not follow offered at any step/);
});

test('a poor fit is warned with its reasons', () => {
  const cases: { says: string; rows: [number, number][]; reason: RegExp }[] = [
    // A service at 8/s given steps from 20/s: every step is past the knee.
    {
      says: 'first step past the knee',
      rows: [
        [20, 8],
        [40, 8.1],
        [60, 8],
        [80, 7.9],
      ],
      reason: /already short of offered at the first steps \(0\.4 served per offered\)/,
    },
    // Served jumps about by ±15 % past the knee: the lines do not describe the steps.
    {
      says: 'scattered',
      rows: [
        [10, 10],
        [20, 20],
        [30, 30],
        [40, 34],
        [50, 26],
        [60, 35],
        [70, 25],
      ],
      reason: /lie [\d.]+\/s from the lines on average/,
    },
  ];
  for (const c of cases) {
    const knee = kneeOf(fitKnee(steps(c.rows)), c.says);
    assert.match(knee.warning ?? '', /^poor fit: /, c.says);
    assert.match(knee.warning ?? '', c.reason, c.says);
  }
});

test('fewer than three offered rates, or bad steps: nothing is fitted, and the reason says why', () => {
  assert.deepEqual(
    fitKnee(
      steps([
        [20, 20],
        [40, 30],
        [40, 31],
      ]),
    ),
    {
      kind: 'not-fitted',
      reason: '2 steps; a knee needs at least 3 offered rates (one below it, one past it, one to place it)',
    },
  );
  // NaN, nothing offered and negative served are left out: what remains has no knee.
  const rest = fitKnee([
    ...steps([
      [20, 20],
      [40, 40],
      [60, 60],
    ]),
    { offeredPerSec: Number.NaN, servedPerSec: 5 },
    { offeredPerSec: 0, servedPerSec: 3 },
    { offeredPerSec: 80, servedPerSec: -1 },
  ]);
  assert.equal(rest.kind, 'none');
});
