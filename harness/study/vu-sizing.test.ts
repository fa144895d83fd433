import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalysisResult } from '../../contract/index.ts';
import { SERVICE_DEFAULTS } from '../../target-service/config.ts';
import { MAX_PLANNED_VUS, planVus, resizeAfterDrops, type SizingInputs } from './vu-sizing.ts';

const DEFAULT_STEPS = [20, 40, 60, 70, 80, 90, 110];

function inputs(overrides: Partial<SizingInputs> = {}): SizingInputs {
  return {
    ratesPerSec: DEFAULT_STEPS,
    holdSeconds: 20,
    recoveryRatePerSec: 50,
    jitterSeconds: 0,
    timeoutSeconds: 10,
    service: { ...SERVICE_DEFAULTS },
    ...overrides,
  };
}

test('a shedding service: top rate × (acquire timeout + query + 50 ms) + pool and queue, with 30 % margin', () => {
  // 110 × (0.2 + 0.05 + 0.05) + 4 + 8 = 45 in flight → ceil(45 × 1.3) + 10 = 69
  const v = planVus(inputs());
  assert.equal(v.preAllocatedVUs, 69);
  assert.ok(v.maxVUs >= v.preAllocatedVUs);
  assert.match(v.basis, /top rate 110\/s/);
});

test('a queueing service holds its whole backlog: the default steps need thousands of VUs', () => {
  const service = { ...SERVICE_DEFAULTS, shed: false };
  // ceiling 4 ÷ (0.05 × 1.4 + 0.005) = 53.3/s; backlog Σ (rate − 53.3) × 20 over 60..110 = 2,867
  const v = planVus(inputs({ service }));
  assert.ok(v.preAllocatedVUs >= 2867 && v.preAllocatedVUs <= 2867 * 1.3 + 30, String(v.preAllocatedVUs));
  assert.match(v.basis, /predicted ceiling 53\.33\/s, backlog by the end of the ramp 2867/);
  // Below the ceiling nothing queues: only top rate × 0.1 s.
  const below = planVus(inputs({ service, ratesPerSec: [20, 40] }));
  assert.equal(below.preAllocatedVUs, Math.ceil(50 * 0.1 * 1.3) + 10);
});

test('jitter holds each VU that much longer; an unknown target is planned at 1 s per request', () => {
  const plain = planVus(inputs());
  const jittered = planVus(inputs({ jitterSeconds: 1 }));
  // + 110/s × 1 s × 1.3 margin
  assert.equal(jittered.preAllocatedVUs - plain.preAllocatedVUs, 143);
  const own = planVus(inputs({ service: undefined }));
  assert.equal(own.preAllocatedVUs, Math.ceil(110 * 1.3) + 10);
  assert.match(own.basis, /your own target/);
});

test('the plan never passes the cap, and maxVUs never passes what a whole timeout could hold', () => {
  const huge = planVus(
    inputs({ service: { ...SERVICE_DEFAULTS, shed: false }, ratesPerSec: [5000], holdSeconds: 60 }),
  );
  assert.equal(huge.preAllocatedVUs, MAX_PLANNED_VUS);
  assert.equal(huge.maxVUs, MAX_PLANNED_VUS);
  const small = planVus(inputs({ ratesPerSec: [10], recoveryRatePerSec: 5, timeoutSeconds: 2 }));
  // every VU busy for a whole 2 s timeout at 10/s is 20 (+10 spare): the cap on maxVUs
  assert.equal(small.maxVUs, Math.max(small.preAllocatedVUs, 30));
});

/** An analysis with only what resizing reads. */
function analysis(options: {
  rows: { step: string; offered: number | null; served: number; dropped: number; medMs: number }[];
  resource?: string;
  plateau?: number;
}): AnalysisResult {
  return {
    table: options.rows.map((r) => ({
      step: r.step,
      offeredPerSec: r.offered,
      servedPerSec: r.served,
      dropped: r.dropped,
      latencyMs: { med: r.medMs },
    })),
    verdict: {
      firstLimit: { resource: options.resource ?? 'pool' },
      plateau: options.plateau === undefined ? null : { servedPerSec: options.plateau },
    },
  } as unknown as AnalysisResult;
}

const QUEUED_ROWS = [
  { step: 'r040', offered: 40, served: 40, dropped: 0, medMs: 60 },
  { step: 'r080', offered: 80, served: 68, dropped: 0, medMs: 900 },
  { step: 'r110', offered: 110, served: 68, dropped: 120, medMs: 4000 },
  { step: 'recovery', offered: null, served: 60, dropped: 30, medMs: 6000 },
];

test('after drops with a healthy generator: the backlog the measured plateau implies, at least twice the VUs', () => {
  const previous = planVus(inputs({ ratesPerSec: [40, 80, 110] }));
  const next = resizeAfterDrops(
    previous,
    analysis({ rows: QUEUED_ROWS, plateau: 68 }),
    inputs({ ratesPerSec: [40, 80, 110] }),
  );
  assert.ok(next);
  // backlog (80 − 68 + 110 − 68) × 20 = 1,080, plus 110/s × min(6 s median, 10 s timeout) = 660
  assert.ok(next.preAllocatedVUs >= 1740, String(next.preAllocatedVUs));
  assert.ok(next.preAllocatedVUs >= 2 * previous.preAllocatedVUs);
  assert.match(next.basis, /rerun after drops \(r110 120, recovery 30\)/);
  assert.match(next.basis, /measured ceiling 68\/s, backlog 1080/);
});

test('no rerun without drops, when the generator could not keep up, or when the cap was already planned', () => {
  const previous = planVus(inputs());
  const clean = QUEUED_ROWS.map((r) => ({ ...r, dropped: 0 }));
  assert.equal(resizeAfterDrops(previous, analysis({ rows: clean, plateau: 68 }), inputs()), undefined);
  assert.equal(
    resizeAfterDrops(previous, analysis({ rows: QUEUED_ROWS, resource: 'generator' }), inputs()),
    undefined,
  );
  const capped = { ...previous, preAllocatedVUs: MAX_PLANNED_VUS, maxVUs: MAX_PLANNED_VUS };
  assert.equal(resizeAfterDrops(capped, analysis({ rows: QUEUED_ROWS, plateau: 68 }), inputs()), undefined);
});
