import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow } from '../../contract/index.ts';
import { judgeRepeats, NOISE_FLOOR, noiseShareOf, pairRepeats, type RepeatInputs } from './repeats.ts';
import { rateRow } from './test-rows.ts';

const objectives = { p95Ms: 250, failRate: 0.01 };
const p95 = (ms: number) => ({ latencyMs: { med: ms / 2, p95: ms, p99: ms, max: ms } });
/** A repeat of `offered`: the row of `r<offered>b`. */
const again = (offered: number, served: number, extra: Partial<SaturationRow> = {}) =>
  rateRow(offered, served, { step: `r${String(offered).padStart(3, '0')}b`, ...extra });

// The first pass of a pool-bound service: following to 70/s, the plateau at 80/s serving 72/s.
const firstPass = [
  rateRow(20, 20.1),
  rateRow(40, 39.6),
  rateRow(60, 60.3),
  rateRow(70, 69.5, p95(180)),
  rateRow(80, 72, p95(400)),
  rateRow(90, 72.2, p95(420)),
];
const inputs = (repeats: SaturationRow[], extra: Partial<RepeatInputs> = {}): RepeatInputs => ({
  firstPass,
  repeats,
  plateau: { index: 4 },
  safe: firstPass[3],
  objectives,
  followingShare: 0.9,
  ...extra,
});

test('each repeat is paired with the step it repeats, with how far served moved', () => {
  const pairs = pairRepeats(firstPass, [
    rateRow(20, 25, { step: 'r020b' }),
    again(70, 69.9),
    again(80, 71.3),
  ]);
  assert.deepEqual(
    pairs.map((p) => [p.step, p.repeat, Math.round(p.movedShare * 1000) / 1000]),
    [
      ['r020', 'r020b', 0.244], // the low step after the overload, draining the queue
      ['r070', 'r070b', 0.006],
      ['r080', 'r080b', 0.01],
    ],
  );
  // A repeat with drops is paired, and says why it is not evidence.
  assert.match(pairRepeats(firstPass, [again(80, 70, { dropped: 3 })])[0]!.invalid!, /3 starts dropped/);
  // A repeat of a step the first pass does not have is left out.
  assert.deepEqual(pairRepeats(firstPass, [again(50, 50)]), []);
});

test("the run's noise: served against sent below the plateau (after the first step), the spread of served past it, at least 2 %", () => {
  const cases: { says: string; rows: SaturationRow[]; plateau: number | null; noise: number }[] = [
    // 39.6 of 40 is the largest stray after r020: 1 %, under the floor.
    { says: 'quiet', rows: firstPass, plateau: 4, noise: NOISE_FLOOR },
    // 56 of 60 sent below the plateau: 6.7 %.
    {
      says: 'a noisy step below',
      rows: [rateRow(20, 20), rateRow(40, 40), rateRow(60, 56), rateRow(80, 60)],
      plateau: 3,
      noise: 4 / 60,
    },
    // The first step ramps from nothing: its 15 of 20 is not counted.
    {
      says: 'the first step',
      rows: [rateRow(20, 15), rateRow(40, 40), rateRow(80, 60)],
      plateau: 2,
      noise: NOISE_FLOOR,
    },
    // Past the plateau each step is a measure of it: 400, 410 and 390/s spread 4.9 %.
    {
      says: 'spread past the plateau',
      rows: [rateRow(100, 100), rateRow(200, 200), rateRow(500, 400), rateRow(600, 410), rateRow(700, 390)],
      plateau: 2,
      noise: 20 / 410,
    },
    // An invalid step is not noise, and a single step past the plateau has no spread.
    {
      says: 'invalid and past',
      rows: [rateRow(20, 20), rateRow(40, 30, { invalid: 'generator CPU 97%' }), rateRow(80, 60)],
      plateau: 2,
      noise: NOISE_FLOOR,
    },
  ];
  for (const c of cases) assert.ok(Math.abs(noiseShareOf(c.rows, c.plateau) - c.noise) < 1e-9, c.says);
});

test('a plateau or safe limit that moved between its step and the repeat by more than the noise is unstable', () => {
  const cases: {
    says: string;
    repeats: SaturationRow[];
    plateau: boolean | null;
    safe: boolean | null;
    words?: RegExp;
  }[] = [
    // Both repeats agree with their first runs: 72 then 71.3/s (1 %), r070 met the objectives twice.
    {
      says: 'held',
      repeats: [again(70, 69.8, p95(190)), again(80, 71.3, p95(410))],
      plateau: true,
      safe: true,
    },
    // The plateau's repeat served 64/s: 11 % from 72/s, more than the 2 % noise.
    {
      says: 'the plateau moved',
      repeats: [again(70, 69.8), again(80, 64, p95(500))],
      plateau: false,
      safe: true,
      words: /served 72\/s at r080 and 64\/s at r080b: it moved 11.1%, more than the run's noise of 2%/,
    },
    // r070's repeat no longer followed (60 of 70 sent): the plateau came a step early, and the safe limit went with it.
    {
      says: 'the step below the plateau fell',
      repeats: [again(70, 60, p95(600)), again(80, 72)],
      plateau: false,
      safe: false,
      words: /r070 followed what was sent and its repeat r070b did not/,
    },
    // The JVM-like case: r070 met the objective once and its repeat queued past it (p95 310 ms).
    {
      says: 'the safe step missed the second time',
      repeats: [again(70, 69.7, p95(310)), again(80, 72)],
      plateau: true,
      safe: false,
      words:
        /r070 met the objectives \(p95 180 ms, 0% failures\) and its repeat r070b did not \(p95 310 ms, over 250 ms\)/,
    },
    // Failures and drops count as missing the objectives too.
    {
      says: 'sheds at the repeat',
      repeats: [again(70, 69, { failureRate: 0.02 }), again(80, 72)],
      plateau: true,
      safe: false,
      words: /2% failures, over 1%/,
    },
    // Only the plateau was repeated: the safe limit is not judged.
    { says: 'safe step not repeated', repeats: [again(80, 72)], plateau: true, safe: null },
    // A repeat with drops is no evidence: neither is judged from it.
    {
      says: 'not evidence',
      repeats: [again(70, 69, { dropped: 2 }), again(80, 70, { dropped: 4 })],
      plateau: null,
      safe: null,
    },
  ];
  for (const c of cases) {
    const verdict = judgeRepeats(inputs(c.repeats))!;
    assert.equal(verdict.plateau.stable, c.plateau, `${c.says}: plateau (${verdict.plateau.words})`);
    assert.equal(verdict.safeLimit.stable, c.safe, `${c.says}: safe limit (${verdict.safeLimit.words})`);
    if (c.words) assert.match(`${verdict.plateau.words} ${verdict.safeLimit.words}`, c.words, c.says);
  }
});

test('no repeats, no judgement; the record line names the decisive pairs and the noise', () => {
  assert.equal(judgeRepeats(inputs([])), null);
  const verdict = judgeRepeats(
    inputs([rateRow(20, 26, { step: 'r020b' }), again(70, 69.8), again(80, 71.3)]),
  )!;
  assert.match(
    verdict.summary,
    /^r070 served 99.3% of what was sent, then 99.7% at r070b \(p95 180 then 60 ms\); r080 served 72\/s then 71.3\/s at r080b \(1% apart; p95 400 then 60 ms\)/,
  );
  assert.match(verdict.summary, /r020b ran between them \(not decisive\); noise 2%/);
  assert.match(verdict.summary, /plateau held, safe limit held$/);
  const unstable = judgeRepeats(inputs([again(70, 69.8), again(80, 60)]))!;
  assert.match(unstable.summary, /plateau UNSTABLE, safe limit held$/);
});
