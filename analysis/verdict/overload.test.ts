import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, Verdict } from '../../contract/index.ts';
import type { VerdictInputs } from './inputs.ts';
import { type Collapse, collapseOf, overloadOf } from './overload.ts';
import { failures, rateRow, serverFigures, timelineSeconds, verdictInputs } from './test-rows.ts';

const HELD: Collapse = { collapsed: false, words: '' };
const FELL: Collapse = { collapsed: true, words: 'served did not hold: it fell' };
const NOT_RECOVERED: Verdict['recovery'] = { seconds: null, summary: 'not recovered' };

test('served past the plateau collapsed when its lowest valid step fell below 80 % of the plateau', () => {
  const cases: { says: string; beyond: SaturationRow[]; collapsed: boolean }[] = [
    // 60/s past a plateau of 62/s is 97 %: it held.
    { says: 'held', beyond: [rateRow(70, 62), rateRow(80, 60)], collapsed: false },
    // 50/s is 81 %: still held.
    { says: 'just held', beyond: [rateRow(70, 62), rateRow(80, 50)], collapsed: false },
    // 40/s is 65 %: a collapse.
    { says: 'fell', beyond: [rateRow(70, 62), rateRow(80, 40)], collapsed: true },
    // The 20/s step is invalid (the generator's doing), so it says nothing about the service.
    {
      says: 'invalid low step',
      beyond: [rateRow(70, 62), rateRow(80, 20, { invalid: 'generator CPU reached 97%' })],
      collapsed: false,
    },
  ];
  for (const c of cases) {
    const collapse = collapseOf(c.beyond, 62);
    assert.equal(collapse.collapsed, c.collapsed, c.says);
    assert.equal(collapse.words === '', !c.collapsed, c.says);
  }
});

test("a collapse's words say where served fell, the clients' timeouts and the work done for callers who had gone", () => {
  const beyond = [
    rateRow(70, 62, { failures: failures({ timeouts: 5 }) }),
    rateRow(90, 40, {
      failures: failures({ timeouts: 20 }),
      server: serverFigures({ queriesPerSec: 120 }),
    }),
  ];
  assert.equal(
    collapseOf(beyond, 62).words,
    "served did not hold: it fell from 62/s to 40/s at r090; 25 requests timed out at the client's deadline, while the service ran 120 queries/s for callers who had gone (work for nobody). A congestion collapse: the queue is deeper than the deadline allows (bound it to deadline ÷ time per request, or honour deadlines)",
  );
});

/** r020, r060 below the plateau; r070 and r080 past it, at 62/s; `past` replaces fields of both. */
function overloadedRun(past: Partial<SaturationRow>[] = [{}, {}]): SaturationRow[] {
  return [rateRow(20, 20), rateRow(60, 58), rateRow(70, 62, past[0]), rateRow(80, 62, past[1])];
}

function overloadOfRun(
  rows: SaturationRow[],
  collapse: Collapse,
  recovery: Verdict['recovery'],
  overrides: Partial<VerdictInputs> = {},
) {
  return overloadOf(verdictInputs(rows, overrides), rows.slice(2), 62, collapse, recovery);
}

test('a service that refused its excess: 503 + Retry-After by reason, and whether served held', () => {
  const refusing = overloadedRun([
    { failures: failures({ shed: 100 }), server: serverFigures({ sheds: { queue: 70, admission: 30 } }) },
    { failures: failures({ shed: 200 }), server: serverFigures({ sheds: { queue: 150, admission: 50 } }) },
  ]);
  const cases: { says: string; rows: SaturationRow[]; collapse: Collapse; overload: string }[] = [
    // 300 refused, by reason largest first, and served held at the plateau.
    {
      says: 'held',
      rows: refusing,
      collapse: HELD,
      overload: '503 + Retry-After (queue 220, admission 80); served rate held at 62/s',
    },
    // Refusals did not save it: the collapse's words replace "held".
    {
      says: 'collapsed',
      rows: refusing,
      collapse: FELL,
      overload: '503 + Retry-After (queue 220, admission 80); served did not hold: it fell',
    },
    // 503s the service gave no reasons for (a service without GET /steps).
    {
      says: 'no reasons',
      rows: overloadedRun([{ failures: failures({ shed: 10 }), server: null }, { server: null }]),
      collapse: HELD,
      overload: '503 + Retry-After; served rate held at 62/s',
    },
  ];
  for (const c of cases) {
    const { overload, backlog } = overloadOfRun(c.rows, c.collapse, NOT_RECOVERED);
    assert.equal(overload, c.overload, c.says);
    assert.equal(backlog, null, `${c.says}: a service that refused built no backlog`);
  }
});

test('a service that queued its excess: the backlog, how long requests waited and how it drained', () => {
  // Five seconds of the last ramp step (40 waiting at its end), then drain and recovery, 3 still waiting at the end.
  const timeline = [
    ...timelineSeconds('r080', 100, [5, 10, 20, 30, 40]),
    ...timelineSeconds('drain', 105, [30, 10, 0]),
    ...timelineSeconds('recovery', 108, [0, 0, 3]),
  ];
  const slowLast = overloadedRun([{}, { latencyMs: { med: 1200, p95: 2500, p99: 2800, max: 3000 } }]);
  const cases: {
    says: string;
    rows?: SaturationRow[];
    recovery?: Verdict['recovery'];
    inputs: Partial<VerdictInputs>;
    overload: string;
    backlog: Partial<NonNullable<Verdict['backlog']>>;
  }[] = [
    // Drained in the 12 s recovery measured.
    {
      says: 'drained',
      recovery: { seconds: 12, summary: '' },
      inputs: { timeline },
      overload:
        'zero errors because nothing was allowed to fail: past 62 served/s the excess queued; 40 waiting when the ramp ended; requests sent at r080 took p95 2.5 s; drained in 12 s at 50/s; 3 still waiting when the load stopped',
      backlog: {
        queuedAtRampEnd: 40,
        waitP95Ms: 2500,
        drainSeconds: 12,
        drainPredicted: false,
        queuedAtEnd: 3,
      },
    },
    // Not drained within the run: 40 ÷ (62 − 50) = 3.3 s, predicted.
    {
      says: 'predicted',
      inputs: { timeline },
      overload:
        'zero errors because nothing was allowed to fail: past 62 served/s the excess queued; 40 waiting when the ramp ended; requests sent at r080 took p95 2.5 s; predicted to drain in ~3.3 s at 50/s (the run ended first); 3 still waiting when the load stopped',
      backlog: { drainSeconds: 3.3, drainPredicted: true },
    },
    // A recovery rate of 70/s is above the plateau of 62/s: the backlog never drains.
    {
      says: 'never drains',
      inputs: { timeline, recoveryRatePerSec: 70 },
      overload:
        'zero errors because nothing was allowed to fail: past 62 served/s the excess queued; 40 waiting when the ramp ended; requests sent at r080 took p95 2.5 s; never drains at the recovery rate (it is not below the plateau); 3 still waiting when the load stopped',
      backlog: { drainSeconds: null, drainPredicted: true },
    },
    // Client side only: in flight beyond plateau × median latency (62 × 0.5 s = 31): 76 − 31 = 45, then 34 − 31 = 3;
    // 45 ÷ (62 − 50) = 3.75 s to drain.
    {
      says: 'client side only',
      rows: overloadedRun([
        {},
        {
          latencyMs: { med: 1200, p95: 2500, p99: 2800, max: 3000 },
          latencyByWindowMs: { med: 500, p95: 900, p99: 950, max: 990 },
        },
      ]),
      inputs: {
        clientInFlightAt: (atS) => (atS === 100 ? 76 : 34),
        clientRampEndS: 100,
        clientLoadEndS: 130,
      },
      overload:
        'zero errors because nothing was allowed to fail: past 62 served/s the excess queued; 45 waiting when the ramp ended; requests sent at r080 took p95 2.5 s; predicted to drain in ~3.8 s at 50/s (the run ended first); 3 still waiting when the load stopped',
      backlog: { queuedAtRampEnd: 45, queuedAtEnd: 3, drainSeconds: 3.8, drainPredicted: true },
    },
    // Timeouts and 5xx, but no refusals: the failures are counted, and the excess still queued.
    {
      says: 'failures without refusals',
      rows: overloadedRun([
        {},
        {
          latencyMs: { med: 1200, p95: 2500, p99: 2800, max: 3000 },
          failures: failures({ timeouts: 12, serverErrors: 3 }),
        },
      ]),
      recovery: { seconds: 12, summary: '' },
      inputs: { timeline },
      overload:
        '15 failures (timeouts 12) and no refusals: past 62 served/s the excess queued; 40 waiting when the ramp ended; requests sent at r080 took p95 2.5 s; drained in 12 s at 50/s; 3 still waiting when the load stopped',
      backlog: { queuedAtRampEnd: 40 },
    },
  ];
  for (const c of cases) {
    const { overload, backlog } = overloadOfRun(
      c.rows ?? slowLast,
      HELD,
      c.recovery ?? NOT_RECOVERED,
      c.inputs,
    );
    assert.equal(overload, c.overload, c.says);
    for (const [key, value] of Object.entries(c.backlog))
      assert.equal(backlog?.[key as keyof typeof backlog], value, `${c.says}: ${key}`);
  }
});

test('a collapse without refusals is said as such, and the backlog is still measured', () => {
  const timeline = [...timelineSeconds('r080', 100, [40]), ...timelineSeconds('drain', 101, [30, 0])];
  const { overload, backlog } = overloadOfRun(overloadedRun(), FELL, NOT_RECOVERED, { timeline });
  assert.equal(overload, 'no refusals; served did not hold: it fell');
  assert.equal(backlog?.queuedAtRampEnd, 40);
});

test('requests answered 504 because their deadline had passed are added to the overload, by reason', () => {
  const rows = overloadedRun([
    { failures: failures({ shed: 100 }), server: serverFigures({ sheds: { queue: 100 } }) },
    { failures: failures({ expired: 30 }), server: serverFigures({ expired: { deadline: 30 } }) },
  ]);
  assert.equal(
    overloadOfRun(rows, HELD, NOT_RECOVERED).overload,
    '503 + Retry-After (queue 100); served rate held at 62/s; 30 answered 504 because their deadline had passed (deadline 30): no work was done for them',
  );
});
