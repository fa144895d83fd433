import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, ServiceSettings } from '../../contract/index.ts';
import { DEFAULT_CRITERIA } from './criteria.ts';
import { stepsCeilings, stepsLimit } from './steps-limit.ts';
import { plateauAt, rateRow, serverFigures } from './test-rows.ts';

const SETTINGS: ServiceSettings = { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} };

type Server = Partial<NonNullable<SaturationRow['server']>>;

const POOL_FULL: Server = { checkedOutPct: 99, waitingMean: 6.8, waitingMax: 8, waitP95Ms: 190 };
const CPU_FULL: Server = { cpuPct: 90, eventLoopUtilization: 0.95 };

/**
 * Quiet r020 and r040, the plateau at r070 (62 served/s) with `plateau`'s server figures, and
 * r080 with `next`'s; `base` is added to r020's (the baseline).
 */
function run(plateau: Server, next: Server = {}, base: Server = {}): SaturationRow[] {
  return [
    rateRow(20, 20, { server: serverFigures(base) }),
    rateRow(40, 40),
    rateRow(70, 62, { server: serverFigures(plateau) }),
    rateRow(80, 62, { server: serverFigures(next) }),
  ];
}

function limitOf(rows: SaturationRow[]) {
  const notes: string[] = [];
  const finding = stepsLimit(plateauAt(rows, 2), SETTINGS, DEFAULT_CRITERIA, notes);
  return { ...finding, notes };
}

test("the first limit from plateau's own figures: pool, CPU, database, admission gate, or unlisted", () => {
  const cases: { says: string; rows: SaturationRow[]; resource: string; saturated: RegExp }[] = [
    // 99 % checked out with the queue at its cap of 8: the pool.
    {
      says: 'pool',
      rows: run(POOL_FULL),
      resource: 'pool',
      saturated:
        /^pool 99% checked out of 4 \| waiting mean 6\.8, max 8 \(queue cap 8\) \| wait p95 190 ms \(0\.3 ms at r020\)$/,
    },
    // CPU at 90 % of a core: the CPU.
    {
      says: 'cpu',
      rows: run(CPU_FULL),
      resource: 'cpu',
      saturated: /^CPU 90%, event loop 95% busy \(20%, 20% at r020\)$/,
    },
    // CPU at 60 %, but the one event-loop thread 95 % busy: still the CPU.
    {
      says: 'event loop',
      rows: run({ cpuPct: 60, eventLoopUtilization: 0.95 }),
      resource: 'cpu',
      saturated: /event loop 95% busy/,
    },
    // Query p95 up from 51 to 120 ms with the pool half used: the database.
    {
      says: 'database',
      rows: run({ queryP95Ms: 120, checkedOutPct: 50 }),
      resource: 'database',
      saturated: /^query p95 120 ms \(51 ms at r020\) \| pool 50% checked out of 4$/,
    },
    // Nothing full, but 40 + 60 refused at the door: the admission gate.
    {
      says: 'admission',
      rows: run({ sheds: { admission: 40 } }, { sheds: { admission: 60 } }),
      resource: 'admission',
      saturated: /^the admission gate refused 100 requests at the door \(503, reason admission\)$/,
    },
    // Nothing full, nothing refused: off the list.
    { says: 'unlisted', rows: run({}), resource: 'unlisted', saturated: /^$/ },
  ];
  for (const c of cases) {
    const finding = limitOf(c.rows);
    assert.equal(finding.resource, c.resource, c.says);
    assert.match(finding.saturated?.join(' | ') ?? '', c.saturated, c.says);
  }
});

test('what did not saturate is listed flat beside the limit, and the summary names it with the plateau', () => {
  const pool = limitOf(run(POOL_FULL));
  assert.equal(pool.summary, 'pool, 62 served/s');
  assert.deepEqual(pool.flat, [
    'query p95 51 ms (51 ms at r020)',
    'CPU 20%, event loop 20% busy (20%, 20% at r020)',
  ]);
  const unlisted = limitOf(run({}));
  assert.equal(
    unlisted.summary,
    'throughput flattened but no listed queue grew; the bottleneck is off the list (the generator, its link, or an unlisted pool)',
  );
  assert.equal(unlisted.flat?.length, 3);
});

test("with both the pool and the CPU full, the database's own time per query tells who held the connections", () => {
  const cases: {
    says: string;
    rows: SaturationRow[];
    resource: string;
    saturated: RegExp;
    note: RegExp | null;
  }[] = [
    // At 5 ms a query 4 connections serve 800/s; a plateau of 62/s means they waited for the event loop.
    {
      says: 'loop held the pool',
      rows: run({ ...POOL_FULL, ...CPU_FULL, databaseP95Ms: 5 }, {}, { databaseP95Ms: 5 }),
      resource: 'cpu',
      saturated:
        /held by the late event loop: at the database's own 5 ms a query its 4 connections serve 800\/s/,
      note: null,
    },
    // At 60 ms a query they serve 66.7/s: 62/s is the pool's own ceiling, and the CPU is evidence beside it.
    {
      says: 'the database held the pool',
      rows: run({ ...POOL_FULL, ...CPU_FULL, databaseP95Ms: 60 }, {}, { databaseP95Ms: 60 }),
      resource: 'pool',
      saturated: /pool 99% checked out.*CPU 90%/,
      note: null,
    },
    // Without the database's own time it cannot be told: the pool, and a note on how to confirm.
    {
      says: 'unknown',
      rows: run({ ...POOL_FULL, ...CPU_FULL }),
      resource: 'pool',
      saturated: /pool 99% checked out.*CPU 90%/,
      note: /the pool and the CPU were both saturated at r070.*plateau confirm <run-dir> --set POOL_MAX/,
    },
  ];
  for (const c of cases) {
    const finding = limitOf(c.rows);
    assert.equal(finding.resource, c.resource, c.says);
    assert.match(finding.saturated?.join(' | ') ?? '', c.saturated, c.says);
    if (c.note) assert.match(finding.notes.join('\n'), c.note, c.says);
    else assert.deepEqual(finding.notes, [], c.says);
  }
});

test('when nothing listed saturated at the knee, the evidence is read at the next valid step', () => {
  // r070 quiet, r080 with the pool full: the pool.
  assert.equal(limitOf(run({}, POOL_FULL)).resource, 'pool');
  // The same r080 but invalid: not evidence, r070 says unlisted.
  const rows = run({}, POOL_FULL);
  rows[3] = { ...rows[3]!, invalid: 'generator CPU reached 97%' };
  assert.equal(limitOf(rows).resource, 'unlisted');
});

test("a query time that rose only as the service saw it is the event loop's, noted, not the database", () => {
  const finding = limitOf(
    run({ queryP95Ms: 120, databaseP95Ms: 5, loopDelayP95Ms: 45 }, {}, { databaseP95Ms: 5 }),
  );
  assert.equal(finding.resource, 'unlisted');
  assert.match(
    finding.notes.join('\n'),
    /query time the service saw rose \(p95 120 ms, 51 ms at r020\) while the database's own stayed flat: .*\(loop delay p95 45 ms\), not the database/,
  );
});

test("without plateau's own figures at the plateau there is no finding from them", () => {
  const rows = run({}).map((r) => ({ ...r, server: null }));
  assert.equal(stepsLimit(plateauAt(rows, 2), SETTINGS, DEFAULT_CRITERIA, []), null);
});

test("the pool's and the event loop's ceilings, by Little's Law over the steps below the plateau", () => {
  const server = (checkedOutMean: number | undefined, cpuPct: number, checkedOutPct = 20) =>
    serverFigures({ checkedOutPct, cpuPct, ...(checkedOutMean !== undefined ? { checkedOutMean } : {}) });
  const cases: {
    says: string;
    rows: SaturationRow[];
    settings?: ServiceSettings;
    ceilings: [string, number, number][];
  }[] = [
    // 1.08 connections held at 20/s: 54 ms each, 4 ÷ 0.054 = 74.1/s; 20 % of a core: 10 ms, 100/s.
    {
      says: 'one step',
      rows: [rateRow(20, 20, { server: server(1.08, 20) })],
      ceilings: [
        ['pool', 0.054, 74.1],
        ['cpu', 0.01, 100],
      ],
    },
    // Without the mean checked out, 27 % of 4 is the same 1.08.
    {
      says: 'from the % checked out',
      rows: [rateRow(20, 20, { server: server(undefined, 20, 27) })],
      ceilings: [
        ['pool', 0.054, 74.1],
        ['cpu', 0.01, 100],
      ],
    },
    // 20 s at 20/s holding 1.0 (50 ms) and 5 s at 40/s holding 3.2 (80 ms): (20 + 16) ÷ (400 + 200) = 60 ms, weighted by requests.
    {
      says: 'weighted by requests',
      rows: [
        rateRow(20, 20, { server: server(1.0, 20) }),
        rateRow(40, 40, { seconds: 5, server: server(3.2, 40) }),
      ],
      ceilings: [
        ['pool', 0.06, 66.7],
        ['cpu', 0.01, 100],
      ],
    },
    // The pool's size unknown: only the CPU's ceiling.
    {
      says: 'no pool max',
      rows: [rateRow(20, 20, { server: server(1.08, 20) })],
      settings: { ...SETTINGS, poolMax: null },
      ceilings: [['cpu', 0.01, 100]],
    },
    // No GET /steps, or nothing served: nothing to predict from.
    { says: 'no server', rows: [rateRow(20, 20, { server: null })], ceilings: [] },
    { says: 'nothing served', rows: [rateRow(20, 0, { server: server(1.08, 20) })], ceilings: [] },
  ];
  for (const c of cases) {
    const ceilings = stepsCeilings(c.rows, c.settings ?? SETTINGS);
    assert.deepEqual(
      ceilings.map((p) => [p.name, p.holdSecondsPerRequest, p.ceilingPerSec]),
      c.ceilings,
      c.says,
    );
  }
  assert.deepEqual(stepsCeilings([rateRow(20, 20, { server: server(1.08, 20) })], SETTINGS)[0], {
    name: 'pool',
    role: 'pool',
    capacity: 4,
    holdSecondsPerRequest: 0.054,
    ceilingPerSec: 74.1,
  });
});
