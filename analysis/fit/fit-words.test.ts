// The fitted curves as the records word them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KneeResult, UslResult } from '../../contract/index.ts';
import { kneeWords, uslWords } from './fit-words.ts';
import { fitUsl } from './usl.ts';

test('the USL line: coefficients, the peak, the quality, then the warning', () => {
  // SPEC SDM91 (usl.test.ts): the peak lies inside the levels swept.
  const spec = fitUsl(
    [
      [1, 64.9],
      [18, 995.9],
      [36, 1652.4],
      [72, 1853.2],
      [108, 1828.9],
      [144, 1775.0],
      [216, 1702.2],
    ].map(([concurrency, perSec]) => ({ concurrency: concurrency!, perSec: perSec! })),
  );
  assert.equal(
    uslWords(spec, 'users'),
    'σ 0.0277 (contention), κ 0.000104 (coherency), λ 90/s for one client; peak 1883.9/s at 96.5 users; R² 0.990, residual 82.8/s',
  );
  const base = {
    kind: 'usl',
    levels: 6,
    lambdaPerSec: 10,
    sigma: 0.05,
    kappa: 0.0001,
    peak: { concurrency: 97.47, perSec: 144.1 },
    ceilingPerSec: null,
    rSquared: 0.9991,
    residualPerSec: 0.42,
    maxConcurrency: 32,
    warning: null,
  } as const;
  const cases: { says: string; usl: UslResult; words: string }[] = [
    {
      says: 'a peak beyond the levels swept is extrapolated',
      usl: base,
      words:
        'σ 0.05 (contention), κ 0.0001 (coherency), λ 10/s for one client; peak 144.1/s at 97.5 clients (beyond the 32 swept: extrapolated); R² 0.999, residual 0.4/s',
    },
    {
      says: 'κ = 0: no peak, the Amdahl ceiling',
      usl: { ...base, kappa: 0, peak: null, ceilingPerSec: 200 },
      words:
        'σ 0.05 (contention), κ 0 (coherency), λ 10/s for one client; no peak (κ = 0): it rises toward λ/σ = 200/s; R² 0.999, residual 0.4/s',
    },
    {
      says: 'linear, three levels: no residual, and the warning last',
      usl: {
        ...base,
        levels: 3,
        sigma: 0,
        kappa: 0,
        peak: null,
        rSquared: 1,
        residualPerSec: null,
        warning: 'poor fit: only 3 levels',
      },
      words:
        'σ 0 (contention), κ 0 (coherency), λ 10/s for one client; no peak (σ = κ = 0): linear over the levels swept; R² 1.000; poor fit: only 3 levels',
    },
    {
      says: 'not fitted',
      usl: { kind: 'not-fitted', reason: '2 levels of concurrency' },
      words: 'not fitted: 2 levels of concurrency',
    },
  ];
  for (const c of cases) assert.equal(uslWords(c.usl), c.words, c.says);
});

test('the knee line: the knee, the measured plateau beside it, the quality, then the warning', () => {
  const knee = {
    kind: 'knee',
    offeredPerSec: 72.73,
    servedPerSec: 72.05,
    slopeBelow: 0.9906,
    slopePast: -0.001,
    slopePastAssumed: false,
    stepsBelow: 6,
    stepsPast: 4,
    rSquared: 0.99994,
    residualPerSec: 0.174,
    warning: null,
  } as const;
  const plateau = { step: 'r080', servedPerSec: 72.3, offeredPerSec: 80 };
  const cases: {
    says: string;
    knee: KneeResult | null;
    plateau: typeof plateau | null;
    words: string | null;
  }[] = [
    {
      says: 'flat past it, fitted',
      knee: { ...knee, slopePast: 0.001 },
      plateau,
      words:
        '72.7/s offered, serving 72.1/s: 0.99 served per offered below it, 0 per offered past it; measured plateau 72.3/s at r080; R² 1.000, residual 0.2/s',
    },
    {
      says: 'a collapse past it',
      knee: { ...knee, slopePast: -0.75 },
      plateau,
      words:
        '72.7/s offered, serving 72.1/s: 0.99 served per offered below it, -0.75 per offered past it (served fell); measured plateau 72.3/s at r080; R² 1.000, residual 0.2/s',
    },
    {
      says: 'flat assumed, and a warning',
      knee: {
        ...knee,
        slopePast: 0,
        slopePastAssumed: true,
        stepsPast: 1,
        warning: 'poor fit: one step below the knee',
      },
      plateau,
      words:
        '72.7/s offered, serving 72.1/s: 0.99 served per offered below it, flat past it (assumed: one step past); measured plateau 72.3/s at r080; R² 1.000, residual 0.2/s; poor fit: one step below the knee',
    },
    {
      says: 'no knee, no plateau',
      knee: {
        kind: 'none',
        slope: 1,
        reason: 'served followed offered to the last step (1 served per offered)',
      },
      plateau: null,
      words: 'none: served followed offered to the last step (1 served per offered); no plateau measured',
    },
    {
      says: 'not fitted',
      knee: { kind: 'not-fitted', reason: '2 steps' },
      plateau: null,
      words: 'not fitted: 2 steps; no plateau measured',
    },
    // No rate steps: no line.
    { says: 'no rate steps', knee: null, plateau: null, words: null },
  ];
  for (const c of cases) assert.equal(kneeWords(c.knee, c.plateau), c.words, c.says);
});
