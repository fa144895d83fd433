import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type AnalysisResult,
  ERROR_CODES,
  isPlateauError,
  type SaturationRow,
  type ServiceSettings,
  type TimelinePoint,
} from '../contract/index.ts';
import { renderRecord } from './render.ts';
import { loadTemplates } from './templates.ts';
import { rateRow, verdictInputs } from './verdict/test-rows.ts';
import {
  criteriaChanges,
  DEFAULT_CRITERIA,
  decideVerdict,
  parseCriteria,
  type VerdictInputs,
} from './verdict.ts';

const SHED_SETTINGS: ServiceSettings = {
  poolMax: 4,
  queueMax: 8,
  acquireTimeoutMs: 200,
  shed: true,
  extra: {},
};

/** A table row: offered rate, served rate, and any server/latency overrides. */
function row(
  offered: number,
  served: number,
  server: Partial<NonNullable<SaturationRow['server']>> = {},
  extra: Partial<SaturationRow> = {},
): SaturationRow {
  return {
    step: `r${String(offered).padStart(3, '0')}`,
    offeredPerSec: offered,
    sentPerSec: offered,
    servedPerSec: served,
    servedSource: 'server',
    seconds: 20,
    requests: offered * 20,
    latencyMs: { med: 55, p95: 60, p99: 70, max: 90 },
    failures: { shed: 0, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
    failureRate: 0,
    dropped: 0,
    generator: { lagMsMax: 2, cpuPctMax: 20 },
    server: {
      checkedOutPct: 20,
      eventLoopUtilization: 0.2,
      waitingMean: 0,
      waitingMax: 0,
      waitP95Ms: 0.3,
      queryP95Ms: 51,
      cpuPct: 20,
      ...server,
    },
    invalid: null,
    ...extra,
  };
}

function inputs(rows: SaturationRow[], overrides: Partial<VerdictInputs> = {}): VerdictInputs {
  return {
    rows,
    settings: SHED_SETTINGS,
    timeline: [],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: 50,
    ...overrides,
  };
}

const shed = (n: number) => ({
  shed: n,
  rateLimited: 0,
  serverErrors: 0,
  clientErrors: 0,
  timeouts: 0,
  networkErrors: 0,
});

test("pool-limited: the pool saturates as served flattens; Little's Law agrees", () => {
  const rows = [
    row(20, 20, { checkedOutPct: 27 }), // 4 × 0.054 s × 20/s ÷ 4
    row(40, 40, { checkedOutPct: 54 }),
    row(60, 59.5, { checkedOutPct: 81, waitingMax: 2, waitP95Ms: 20 }),
    row(
      70,
      62,
      { checkedOutPct: 99, waitingMean: 6.8, waitingMax: 8, waitP95Ms: 190 },
      { failures: shed(160), failureRate: 0.11, latencyMs: { med: 200, p95: 240, p99: 250, max: 260 } },
    ),
    row(
      80,
      62,
      { checkedOutPct: 100, waitingMean: 7.9, waitingMax: 8, waitP95Ms: 200 },
      { failures: shed(360), failureRate: 0.22 },
    ),
  ];
  const v = decideVerdict(inputs(rows));
  assert.deepEqual(v.plateau, { step: 'r070', servedPerSec: 62, offeredPerSec: 70 });
  assert.equal(v.firstLimit.resource, 'pool');
  assert.match(v.evidence.saturated.join(' '), /pool 99% checked out of 4/);
  assert.match(v.evidence.saturated.join(' '), /queue cap 8/);
  assert.match(v.evidence.flat.join(' '), /query p95 51 ms/);
  assert.match(v.evidence.flat.join(' '), /CPU 20%/);
  // Below the knee (r060): hold = 0.81 × 4 / 59.5 = 54.5 ms → ceiling 73.4/s
  assert.equal(v.littlesLaw?.holdMsBelowKnee, 54.45);
  assert.equal(v.littlesLaw?.predictedCeilingPerSec, 73.5);
  // At the plateau: hold = 4 / 62 = 64.5 ms; queue full → 8 × 64.5 / 4 = 129 ms
  assert.equal(v.littlesLaw?.holdMsAtPlateau, 64.52);
  assert.equal(v.littlesLaw?.predictedQueueWaitMs, 129);
  assert.equal(v.littlesLaw?.disagreement, null);
  assert.deepEqual(v.safeLimit, {
    ratePerSec: 60,
    step: 'r060',
    p95Ms: 60,
    failureRate: 0,
    jittered: false,
    fromRun: null,
  });
  assert.equal(v.overload, '503 + Retry-After; served rate held at 62/s');
  assert.match(v.nextLimit, /PostgreSQL/);
});

test('CPU-limited: the process reaches a core while the pool has room', () => {
  const rows = [
    row(50, 50, { cpuPct: 40 }),
    row(100, 99, { cpuPct: 80 }),
    row(150, 110, { cpuPct: 98, checkedOutPct: 60 }),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'cpu');
  assert.match(v.evidence.saturated[0]!, /CPU 98%/);
  assert.match(v.evidence.flat.join(' '), /pool 60%/);
});

test('CPU first though the pool is full too: the late event loop held the connections (a second limit in series)', () => {
  // CPU_MS=15: 4 connections × 50.5 ms of database time could serve 79/s, but served
  // flattens at 47/s with the core at 100 %: the pool reads full because its connections
  // wait for the loop. Measured: run 20261202-043642 (CPU_MS=15, SHED=off).
  const db = { databaseP95Ms: 50.5 };
  const rows = [
    row(20, 20, { cpuPct: 39, eventLoopUtilization: 0.41, checkedOutPct: 27, waitP95Ms: 0.4, ...db }),
    row(40, 40, { cpuPct: 80, eventLoopUtilization: 0.8, checkedOutPct: 60, waitP95Ms: 3, ...db }),
    row(60, 46.6, {
      cpuPct: 102,
      eventLoopUtilization: 0.99,
      checkedOutPct: 100,
      waitingMean: 6.2,
      waitingMax: 12,
      waitP95Ms: 257,
      ...db,
    }),
    row(80, 47.2, {
      cpuPct: 100,
      eventLoopUtilization: 0.99,
      checkedOutPct: 100,
      waitingMean: 30,
      waitingMax: 66,
      waitP95Ms: 10_000,
      ...db,
    }),
  ];
  const v = decideVerdict(inputs(rows, { settings: { ...SHED_SETTINGS, queueMax: null, shed: false } }));
  assert.equal(v.firstLimit.resource, 'cpu');
  assert.match(v.evidence.saturated[0]!, /CPU 102%/);
  assert.match(
    v.evidence.saturated.join(' '),
    /held by the late event loop: at the database's own 50.5 ms a query its 4 connections serve 79.2\/s/,
  );
  assert.doesNotMatch(v.evidence.flat.join(' '), /CPU/, 'a saturated CPU is never listed as flat');
});

test('pool first when both are full and the pool serves what the database time allows', () => {
  // 4 connections × 50.5 ms could serve 79/s and served reaches 70/s (88 %): the pool.
  const db = { databaseP95Ms: 50.5 };
  const rows = [
    row(20, 20, { checkedOutPct: 27, waitP95Ms: 0.3, ...db }),
    row(80, 70, { cpuPct: 90, checkedOutPct: 100, waitingMean: 7.9, waitingMax: 8, waitP95Ms: 200, ...db }),
    row(100, 70, { cpuPct: 90, checkedOutPct: 100, waitingMean: 7.9, waitingMax: 8, waitP95Ms: 200, ...db }),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'pool');
  assert.match(v.evidence.saturated.join(' '), /CPU 90%/);
});

test('event-loop-limited: the loop is saturated even though total CPU stays under a core', () => {
  const rows = [
    row(50, 50, { cpuPct: 30 }),
    row(100, 80, { cpuPct: 70, eventLoopUtilization: 0.97, checkedOutPct: 50 }),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'cpu');
  assert.match(v.evidence.saturated[0]!, /event loop 97% busy/);
});

test('database-limited: query time rises while the pool is not full', () => {
  const rows = [
    row(20, 20),
    row(40, 40, { queryP95Ms: 60 }),
    row(60, 45, { queryP95Ms: 160, checkedOutPct: 75 }),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'database');
  assert.match(v.evidence.saturated[0]!, /query p95 160 ms \(51 ms at r020\)/);
});

test('generator-limited: an invalid plateau row is blamed on the generator, never the service', () => {
  const rows = [
    row(1000, 1000),
    row(
      2000,
      1500,
      { checkedOutPct: 100, waitingMax: 8, waitP95Ms: 200 },
      {
        dropped: 812,
        invalid: 'the generator dropped 812 iterations; generator CPU reached 99%',
        generator: { lagMsMax: 40, cpuPctMax: 99 },
      },
    ),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'generator');
  assert.match(v.firstLimit.summary, /dropped 812/);
  assert.equal(v.safeLimit.ratePerSec, 1000, 'an invalid row is never a safe limit');
});

test('too few VUs: drops from a healthy generator make the verdict inconclusive, not "the generator"', () => {
  const rows = [
    row(20, 20),
    row(
      80,
      62,
      { checkedOutPct: 100, waitingMax: 8, waitP95Ms: 200 },
      {
        dropped: 84,
        invalid: 'the generator dropped 84 iterations',
        generator: { lagMsMax: 3, cpuPctMax: 40 },
      },
    ),
  ];
  const v = decideVerdict(inputs(rows, { vusMax: 85 }));
  assert.equal(v.firstLimit.resource, 'inconclusive');
  assert.match(v.firstLimit.summary, /r080 dropped 84 starts because every VU was busy \(vus_max 85\)/);
  assert.doesNotMatch(v.firstLimit.summary, /generator, not the service/);
  assert.equal(v.safeLimit.ratePerSec, 20);
});

test('no listed resource: throughput flattened, nothing saturated', () => {
  const rows = [row(20, 20), row(40, 30, { checkedOutPct: 40 })];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'unlisted');
  assert.match(v.firstLimit.summary, /no listed queue grew/);
});

test('no plateau within the steps: resource none, safe limit the top step', () => {
  const v = decideVerdict(inputs([row(10, 10), row(20, 19.8), row(30, 29.9)]));
  assert.equal(v.plateau, null);
  assert.equal(v.firstLimit.resource, 'none');
  assert.equal(v.safeLimit.ratePerSec, 30);
  assert.match(v.overload, /not reached/);
});

test('unbounded queue (SHED=off): no errors, latency in seconds, the backlog and its drain time', () => {
  const settings: ServiceSettings = {
    poolMax: 4,
    queueMax: null,
    acquireTimeoutMs: null,
    shed: false,
    extra: {},
  };
  const slow = { latencyMs: { med: 4000, p95: 9300, p99: 9800, max: 9900 } };
  const rows = [
    row(40, 40, { checkedOutPct: 54 }),
    row(80, 62, { checkedOutPct: 100, waitingMean: 140, waitingMax: 290, waitP95Ms: 8000 }, slow),
    row(110, 62, { checkedOutPct: 100, waitingMean: 600, waitingMax: 960, waitP95Ms: 9000 }, slow),
  ];
  const timeline: TimelinePoint[] = [
    {
      t: 100,
      step: 'r110',
      served: 62,
      shed: 0,
      checkedOutMean: 4,
      waitingMean: 950,
      waitingMax: 960,
      cpuPct: 30,
    },
    {
      t: 101,
      step: 'drain',
      served: 62,
      shed: 0,
      checkedOutMean: 4,
      waitingMean: 900,
      waitingMax: 950,
      cpuPct: 30,
    },
    ...Array.from({ length: 80 }, (_, i) => ({
      t: 102 + i,
      step: 'recovery',
      served: 62,
      shed: 0,
      checkedOutMean: 4,
      waitingMean: Math.max(0, 900 - 12 * (i + 1)),
      waitingMax: Math.max(0, 900 - 12 * (i + 1)),
      cpuPct: 30,
    })),
  ];
  const v = decideVerdict(inputs(rows, { settings, timeline }));
  assert.equal(v.firstLimit.resource, 'pool', 'waiting grew without bound');
  // With the client side known, recovery also waits for p95 back under 250 ms: here at 78 s, not 75.
  const clientP95 = new Map(Array.from({ length: 90 }, (_, i) => [101 + i, i < 78 ? 2000 : 100]));
  const withClient = decideVerdict(inputs(rows, { settings, timeline, clientP95MsBySecond: clientP95 }));
  assert.equal(withClient.recovery.seconds, 78);
  assert.match(withClient.recovery.summary, /and p95 under 250 ms within 78 s/);
  assert.equal(
    v.overload,
    'zero errors because nothing was allowed to fail: past 62 served/s the excess queued; 950 waiting when the ramp ended; requests sent at r110 took p95 9.3 s; drained in 75 s at 50/s; 0 still waiting when the load stopped',
  );
  assert.deepEqual(v.backlog, {
    queuedAtRampEnd: 950,
    waitP95Ms: 9300,
    drainSeconds: 75,
    drainPredicted: false,
    queuedAtEnd: 0,
  });
  assert.equal(v.recovery.seconds, 75, 'first second with an empty queue: 900 − 12·75 = 0 at t = 176');
  assert.equal(v.littlesLaw?.predictedQueueWaitMs, null, 'no queue cap, no prediction');
  assert.equal(v.safeLimit.ratePerSec, 40);
});

test('without the server side the verdict says so', () => {
  const rows = [row(20, 20, undefined), row(40, 25)].map((r) => ({
    ...r,
    server: null,
    servedSource: 'client' as const,
  }));
  const v = decideVerdict(inputs(rows, { settings: null }));
  assert.equal(v.firstLimit.resource, 'unlisted');
  assert.match(v.notes.join(' '), /no server side/);
  assert.equal(v.littlesLaw, null);
});

test('database slots: replicas × pool max must fit the ordinary slots', () => {
  const v = decideVerdict(
    inputs([row(10, 10)], {
      database: {
        kind: 'embedded',
        serverVersion: '18.4',
        maxConnections: 100,
        superuserReservedConnections: 3,
        reservedConnections: 0,
        ordinarySlots: 97,
      },
    }),
  );
  assert.deepEqual(v.database, {
    ordinarySlots: 97,
    maxReplicas: 24,
    summary: 'replicas x pool max <= 97 slots (at most 24 replicas of pool 4)',
  });
});

test('criteria: a run re-judged by other thresholds, and the verdict says which', () => {
  const rows = [
    row(50, 50, { cpuPct: 40 }),
    row(100, 99, { cpuPct: 80 }),
    row(150, 110, { cpuPct: 90, checkedOutPct: 60 }),
  ];
  const byDefault = decideVerdict(inputs(rows));
  assert.equal(byDefault.firstLimit.resource, 'cpu', 'CPU 90% is past the default 85%');
  assert.ok(!byDefault.notes.some((n) => n.includes('criteria')), 'defaults are not noted');

  // A service meant to run its CPU hotter: 90% no longer counts as saturated.
  const hot = decideVerdict(inputs(rows, { criteria: { ...DEFAULT_CRITERIA, cpuSaturatedPct: 95 } }));
  assert.equal(hot.firstLimit.resource, 'unlisted');
  assert.ok(
    hot.notes.includes(
      'judged by criteria other than the defaults: CPU-bound from % of one core 95 (default 85)',
    ),
  );

  // A looser idea of "following": 110 of 150 (73%) still follows at 0.7, so no plateau.
  const loose = decideVerdict(inputs(rows, { criteria: { ...DEFAULT_CRITERIA, followingShare: 0.7 } }));
  assert.equal(loose.plateau, null);
  assert.equal(loose.firstLimit.resource, 'none');
});

test('parseCriteria: defaults, accepted values, and every bad value reported at once with its range', () => {
  assert.deepEqual(parseCriteria({}), DEFAULT_CRITERIA);
  assert.deepEqual(parseCriteria({ poolSaturatedPct: '95', queryRise: '2' }), {
    ...DEFAULT_CRITERIA,
    poolSaturatedPct: 95,
    queryRise: 2,
  });
  assert.throws(
    () => parseCriteria({ poolSaturatedPct: '120', followingShare: 'most', cpuSaturatedPct: '' }),
    (error: unknown) => {
      assert.ok(isPlateauError(error));
      assert.equal(error.code, ERROR_CODES.INVALID_CONFIG);
      assert.deepEqual(
        error.problems.map((p) => p.setting),
        ['--following-share', '--pool-saturated', '--cpu-saturated'],
      );
      assert.match(
        error.message,
        /--pool-saturated: "120" is not accepted \(use a number from 1 to 100 \(default 90\)\)/,
      );
      return true;
    },
  );
  assert.deepEqual(criteriaChanges(DEFAULT_CRITERIA), []);
});

/** One timeline second. */
function second(t: number, step: string, waitingMean: number): TimelinePoint {
  return {
    t,
    step,
    served: 50,
    shed: 0,
    checkedOutMean: 2,
    waitingMean,
    waitingMax: Math.ceil(waitingMean),
    cpuPct: 20,
  };
}

test("recovery is judged against the recovery rate's own queue level, not an empty queue", () => {
  const rows = [row(20, 20), row(80, 70, { checkedOutPct: 100, waitingMax: 8, waitP95Ms: 200 })];
  // The backlog drains in 2 s (7.3 → 6.1 → 0.13), then the recovery rate's own queue hovers at 0.1–0.3.
  const noise = [0.2, 0.3, 0.12, 0.25, 0.18, 0.3, 0.22, 0.15, 0.28, 0.2, 0.3, 0.17];
  const timeline = [
    second(99, 'r080', 7.5),
    second(100, 'drain', 7.3),
    second(101, 'drain', 6.1),
    second(102, 'drain', 0.13),
    ...noise.map((w, i) => second(103 + i, 'recovery', w)),
  ];
  const v = decideVerdict(inputs(rows, { timeline }));
  assert.equal(v.recovery.seconds, 2);
  assert.match(v.recovery.summary, /back to the recovery rate's own level \(waiting ≤ 0\.3\) within 2 s/);
});

test('recovery: a queue still draining or still growing at the end of the run is not recovered', () => {
  const rows = [row(20, 20), row(80, 70, { checkedOutPct: 100, waitingMax: 8, waitP95Ms: 200 })];
  const draining = Array.from({ length: 12 }, (_, i) =>
    second(100 + i, i < 5 ? 'drain' : 'recovery', 300 - 20 * i),
  );
  const d = decideVerdict(inputs(rows, { timeline: draining }));
  assert.equal(d.recovery.seconds, null);
  assert.match(d.recovery.summary, /still draining when it ended/);
  const growing = Array.from({ length: 12 }, (_, i) =>
    second(100 + i, i < 5 ? 'drain' : 'recovery', 10 + 10 * i),
  );
  const g = decideVerdict(inputs(rows, { timeline: growing }));
  assert.equal(g.recovery.seconds, null);
  assert.match(g.recovery.summary, /still grew at the recovery rate/);
});

test("the database rule judges by the database's own time: a service-side rise from a slow event loop is not the database", () => {
  const rows = [
    row(20, 20, { queryP95Ms: 54, databaseP95Ms: 50.4 }),
    row(60, 45, { queryP95Ms: 170, databaseP95Ms: 50.3, checkedOutPct: 75, loopDelayP95Ms: 15 }),
  ];
  const v = decideVerdict(inputs(rows));
  assert.equal(v.firstLimit.resource, 'unlisted', 'the database did not slow down');
  assert.ok(v.evidence.flat.some((f) => /database p95 50\.3 ms \(50\.4 ms at r020\)/.test(f)));
  assert.match(
    v.notes.join('\n'),
    /the rise is the service's event loop reading results late \(loop delay p95 15 ms\)/,
  );
  const slowDb = [
    row(20, 20, { queryP95Ms: 54, databaseP95Ms: 50.4 }),
    row(60, 45, { queryP95Ms: 170, databaseP95Ms: 160, checkedOutPct: 75 }),
  ];
  assert.equal(decideVerdict(inputs(slowDb)).firstLimit.resource, 'database');
});

test("Little's Law per step: the pool's mean checked out against served × mean query time", () => {
  const rows = [
    row(20, 20, { checkedOutMean: 1.05, checkedOutPredicted: 1.04 }),
    row(40, 40, { checkedOutMean: 3.5, checkedOutPredicted: 2.1 }),
  ];
  const v = decideVerdict(inputs(rows));
  const pool = v.littlesLawChecks!.filter((c) => c.where === 'pool');
  assert.deepEqual(
    pool.map((c) => [c.step, c.agrees]),
    [
      ['r020', true],
      ['r040', false],
    ],
  );
  assert.match(
    v.notes.join('\n'),
    /Little's Law disagrees at r040 \(pool\): 3\.5 in flight measured, 2\.1 predicted/,
  );
});

test('a served rate that falls past the plateau is a collapse, never "held"', () => {
  // QUEUE_MAX=20 with a 250 ms client deadline: the queue's wait passes the deadline, the
  // clients give up, and the pool keeps running queries for them (run 20261202-043933).
  const timeouts = (n: number) => ({ ...shed(0), timeouts: n });
  const rows = [
    row(40, 37, { checkedOutPct: 48 }),
    row(60, 46.3, { checkedOutPct: 84, waitingMax: 20, waitP95Ms: 199 }, { failures: timeouts(130) }),
    row(
      80,
      21.9,
      { checkedOutPct: 99, waitingMean: 14.5, waitingMax: 20, waitP95Ms: 242, queriesPerSec: 69 },
      { failures: { ...timeouts(510), shed: 58 } },
    ),
    row(
      100,
      0,
      { checkedOutPct: 100, waitingMean: 19, waitingMax: 20, waitP95Ms: 291, queriesPerSec: 69.5 },
      { failures: { ...timeouts(694), shed: 286 } },
    ),
  ];
  const v = decideVerdict(inputs(rows, { settings: { ...SHED_SETTINGS, queueMax: 20 } }));
  assert.doesNotMatch(v.overload, /held/);
  assert.match(v.overload, /served did not hold: it fell from 46.3\/s to 0\/s at r100/);
  assert.match(v.overload, /69.5 queries\/s for callers who had gone/);
  assert.match(v.overload, /congestion collapse/);
});

test('the admission gate as the first limit: it refused at the door before any listed resource was full', () => {
  // ADMISSION=on (delay, 100/20 ms), CPU_MS=15, POOL_MAX=32: served flattened at 36/s with
  // the CPU at 69 % while the gate refused the excess (run 20261202-050203).
  const admission = (n: number) => ({ sheds: { queue: 0, timeout: 0, admission: n } });
  const rows = [
    row(20, 18.7, { cpuPct: 43, eventLoopUtilization: 0.44, checkedOutPct: 3 }),
    row(
      40,
      31,
      { cpuPct: 69, eventLoopUtilization: 0.68, checkedOutPct: 8, ...admission(64) },
      { failures: shed(64) },
    ),
    row(
      60,
      36.4,
      { cpuPct: 76, eventLoopUtilization: 0.75, checkedOutPct: 18, ...admission(223) },
      { failures: shed(223) },
    ),
    row(
      80,
      32.7,
      { cpuPct: 68, eventLoopUtilization: 0.68, checkedOutPct: 15, ...admission(447) },
      { failures: shed(447) },
    ),
  ];
  const v = decideVerdict(
    inputs(rows, { settings: { ...SHED_SETTINGS, poolMax: 32, queueMax: null, shed: false } }),
  );
  assert.equal(v.firstLimit.resource, 'admission');
  assert.match(v.evidence.saturated.join(' '), /the admission gate refused \d+ requests at the door/);
  assert.match(v.overload, /503 \+ Retry-After \(admission \d+\)/);
  assert.match(v.nextLimit, /the CPU the gate protects/);
});

/** The record of a verdict over `rows` (no run.json: only the verdict's lines matter here). */
async function recordOf(
  rows: SaturationRow[],
): Promise<{ verdict: ReturnType<typeof decideVerdict>; record: string }> {
  const verdict = decideVerdict(verdictInputs(rows));
  const analysis: AnalysisResult = {
    kind: 'plateau.analysis',
    schemaVersion: 2,
    runId: null,
    sources: { client: 'k6.csv.gz', server: null, manifest: null },
    objectives: { p95Ms: 250, failRate: 0.01 },
    table: rows,
    verdict,
  };
  return { verdict, record: renderRecord(await loadTemplates(), analysis, undefined) };
}

test('the JVM-like case: a step at the plateau met the objectives for one hold and is still not the safe limit', async () => {
  // A JVM service plateaued at 78.9/s; its 80/s step passed with p95 183.8 ms (its queue had
  // not filled), and 100/s fell to 78 served/s. Any burst at 80/s queues: the safe limit is 60/s.
  const rows = [
    rateRow(20, 20),
    rateRow(40, 40),
    rateRow(60, 60),
    rateRow(80, 78.9, { latencyMs: { med: 90, p95: 183.8, p99: 220, max: 300 } }),
    rateRow(100, 78, { latencyMs: { med: 900, p95: 1800, p99: 2100, max: 2500 } }),
  ];
  const { verdict, record } = await recordOf(rows);
  assert.equal(verdict.plateau?.servedPerSec, 78.9);
  assert.equal(verdict.safeLimit.ratePerSec, 60, 'not 80/s, whose p95 was under the objective');
  assert.match(record, /^safe limit: {4}60\/s \(p95 60 ms, 0% failures\)$/m);
  assert.match(
    record,
    /note: {10}r080 met the objectives \(p95 183.8 ms\) but is not quoted as safe: it is at or above the plateau of 78.9\/s/,
  );
});

test('repeats: the first pass alone finds the plateau; a safe limit whose repeat missed is unstable, not a figure', async () => {
  const slow = (p95: number) => ({ latencyMs: { med: p95 / 2, p95, p99: p95, max: p95 } });
  const repeat = (offered: number, served: number, extra: Partial<SaturationRow> = {}) =>
    rateRow(offered, served, { step: `r${String(offered).padStart(3, '0')}b`, ...extra });
  // Run order: the climb to the plateau at r080 (70 of 80/s), a low step the queue drains in
  // (serving more than it was sent), r070 again, a step past, r080 again.
  const run = (r070b: SaturationRow) => [
    rateRow(20, 20),
    rateRow(40, 40),
    rateRow(60, 60),
    rateRow(70, 69.6, slow(180)),
    rateRow(80, 70, slow(400)),
    repeat(20, 24),
    r070b,
    rateRow(90, 71, slow(450)),
    repeat(80, 70.4, slow(420)),
  ];
  const held = await recordOf(run(repeat(70, 69.8, slow(200))));
  assert.equal(
    held.verdict.plateau?.step,
    'r080',
    'the repeats after the plateau are not read as steps of the climb',
  );
  assert.equal(held.verdict.safeLimit.ratePerSec, 70);
  assert.match(
    held.record,
    /^repeats: {7}r070 served 99.4% of what was sent, then 99.7% at r070b \(p95 180 then 200 ms\); r080 served 70\/s then 70.4\/s at r080b \(0.6% apart; p95 400 then 420 ms\)/m,
  );
  assert.match(held.record, /r020b ran between them \(not decisive\).*plateau held, safe limit held$/m);

  const missed = await recordOf(run(repeat(70, 69.7, slow(320))));
  assert.equal(missed.verdict.safeLimit.ratePerSec, null, 'no figure is written down');
  assert.match(
    missed.record,
    /^safe limit: {4}unstable, not written down: r070 met the objectives \(p95 180 ms, 0% failures\) and its repeat r070b did not \(p95 320 ms, over 250 ms\)/m,
  );
  assert.match(missed.record, /plateau held, safe limit UNSTABLE$/m);

  const moved = await recordOf(
    run(repeat(70, 69.8, slow(200))).map((r) => (r.step === 'r080b' ? repeat(80, 62, slow(500)) : r)),
  );
  assert.match(
    moved.record,
    /^first limit: {3}.*; plateau unstable, not written down: served 70\/s at r080 and 62\/s at r080b: it moved 11.4%, more than the run's noise of 2%$/m,
  );
  assert.equal(moved.verdict.plateau?.unstable !== undefined, true);
});
