import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceStepFigures, SaturationRow } from '../../contract/index.ts';
import { decideVerdict, type VerdictInputs } from '../verdict.ts';

/** A published resource's figures at one step; utilisation is derived. */
function res(
  name: string,
  kind: ResourceStepFigures['kind'],
  role: ResourceStepFigures['role'],
  position: number,
  figures: Partial<ResourceStepFigures> & { inUseMean: number; capacity: number | null },
): ResourceStepFigures {
  return {
    id: name,
    name,
    kind,
    role,
    position,
    seconds: 10,
    inUseMax: figures.inUseMean,
    waitingMean: null,
    waitingMax: null,
    waitMsMean: null,
    holdMsMean: null,
    refused: null,
    acquiredPerSec: null,
    utilisationPct:
      figures.capacity !== null && figures.capacity > 0 ? (figures.inUseMean / figures.capacity) * 100 : null,
    ...figures,
  };
}

const pool = (inUseMean: number, waitingMean: number) =>
  res('hikaricp pool orders', 'slots', 'pool', 1, {
    inUseMean,
    capacity: 4,
    waitingMean,
    waitingMax: waitingMean,
  });
const threads = (inUseMean: number, capacity: number, waitingMean: number) =>
  res('executor http', 'slots', 'threads', 0, {
    inUseMean,
    capacity,
    waitingMean,
    waitingMax: waitingMean,
  });
const cpu = (cores: number) => res('process cpu', 'cpu', 'cpu', 0, { inUseMean: cores, capacity: 2 });

/** A row of a service plateau did not write: no GET /steps, only published resources. */
function row(offered: number, served: number, resources: ResourceStepFigures[]): SaturationRow {
  return {
    step: `r${String(offered).padStart(3, '0')}`,
    offeredPerSec: offered,
    sentPerSec: offered,
    servedPerSec: served,
    servedSource: 'client',
    seconds: 10,
    requests: offered * 10,
    latencyMs: { med: 55, p95: 60, p99: 70, max: 90 },
    failures: { shed: 0, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
    failureRate: 0,
    dropped: 0,
    generator: { lagMsMax: 2, cpuPctMax: 20 },
    server: null,
    resources,
    invalid: null,
  };
}

function inputs(rows: SaturationRow[]): VerdictInputs {
  return {
    rows,
    settings: null,
    timeline: [],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: 10,
  };
}

const cases: {
  name: string;
  rows: SaturationRow[];
  resource: string;
  named: string | undefined;
  evidence: RegExp;
}[] = [
  {
    // Eight threads, four connections of 50 ms: the threads fill because they wait for
    // connections; the pool's ceiling (80/s) is below the threads' (~150/s).
    name: 'the pool, when the threads are full only because they wait on it',
    rows: [
      row(20, 20, [threads(1.05, 8, 0), pool(1, 0), cpu(0.2)]),
      row(60, 60, [threads(3.2, 8, 0), pool(3, 0.2), cpu(0.5)]),
      row(100, 79, [threads(8, 8, 300), pool(4, 4), cpu(0.7)]),
    ],
    resource: 'pool',
    named: 'hikaricp pool orders',
    evidence: /hikaricp pool orders 4 of 4 connections in use \(100%\), waiting mean 4/,
  },
  {
    // Two threads, four connections: the threads' ceiling (2 ÷ 52 ms ≈ 38/s) binds; the
    // pool is half used and nobody waits for it.
    name: 'the request threads, when there are fewer of them than connections',
    rows: [
      row(10, 10, [threads(0.52, 2, 0), pool(0.5, 0), cpu(0.1)]),
      row(30, 30, [threads(1.6, 2, 0.1), pool(1.5, 0), cpu(0.2)]),
      row(50, 38, [threads(2, 2, 120), pool(1.9, 0), cpu(0.3)]),
    ],
    resource: 'threads',
    named: 'executor http',
    evidence: /executor http 2 of 2 threads in use/,
  },
  {
    // 20 ms of CPU per request on two cores: the CPU's ceiling (2 ÷ 0.02 = 100/s) is below
    // the threads' (8 ÷ 70 ms ≈ 114/s), though both are full at the plateau.
    name: 'the CPU, when its ceiling is below the threads that it slows',
    rows: [
      row(20, 20, [threads(1.4, 8, 0), pool(1, 0), cpu(0.4)]),
      row(60, 60, [threads(4.5, 8, 0), pool(3, 0), cpu(1.2)]),
      row(120, 97, [threads(8, 8, 200), pool(2.5, 0), cpu(1.95)]),
    ],
    resource: 'cpu',
    named: 'process cpu',
    evidence: /process cpu 1\.95 of 2 cores busy \(98%\)/,
  },
  {
    // Nothing published was full: the limit is somewhere the meters do not reach.
    name: 'off the list, when no published resource was full',
    rows: [
      row(20, 20, [threads(1, 8, 0), pool(1, 0), cpu(0.2)]),
      row(60, 45, [threads(3, 8, 0), pool(2, 0), cpu(0.4)]),
    ],
    resource: 'unlisted',
    named: undefined,
    evidence: /^$/,
  },
];

for (const c of cases) {
  test(`first limit from published meters: ${c.name}`, () => {
    const verdict = decideVerdict(inputs(c.rows));
    assert.equal(verdict.firstLimit.resource, c.resource);
    assert.equal(verdict.firstLimit.name, c.named);
    assert.match(verdict.evidence.saturated[0] ?? '', c.evidence);
    if (c.named) assert.match(verdict.firstLimit.summary, new RegExp(`^${c.named}, \\d`));
  });
}

test('the resources that were not full are listed flat with their figures', () => {
  const verdict = decideVerdict(inputs(cases[0]!.rows));
  assert.ok(verdict.evidence.flat.some((f) => /^process cpu 0\.7 of 2 cores busy \(35%\)/.test(f)));
  assert.ok(verdict.evidence.saturated.some((f) => /^also full: executor http 8 of 8 threads/.test(f)));
});

test('predicted ceilings come from the first step, lowest first, and the run is checked against them', () => {
  const verdict = decideVerdict(inputs(cases[0]!.rows));
  const names = verdict.prediction!.ceilings.map((c) => `${c.name} ${c.ceilingPerSec}`);
  // From r020 and r060, weighted by what each served (Σ in use ÷ Σ served):
  // pool 4 ÷ ((1 + 3) ÷ 80) = 80/s; threads 8 ÷ ((1.05 + 3.2) ÷ 80) ≈ 150.6/s; cpu 2 ÷ ((0.2 + 0.5) ÷ 80) ≈ 228.6/s.
  assert.deepEqual(names, ['hikaricp pool orders 80', 'executor http 150.6', 'process cpu 228.6']);
  assert.match(
    verdict.prediction!.finding,
    /predicted first: hikaricp pool orders at 80\/s; the run found it at 79\/s \(99% of the prediction\)/,
  );
});

test('a plateau far below every predicted ceiling is a finding: something unlisted binds first', () => {
  const verdict = decideVerdict(inputs(cases[3]!.rows));
  assert.match(
    verdict.prediction!.finding,
    /served flattened at 45\/s, .*below every predicted ceiling: something unlisted binds first/,
  );
});

test('the scaling signal is the first limit, and a CPU-targeted autoscaler would not scale for it', () => {
  const verdict = decideVerdict(inputs(cases[0]!.rows));
  assert.match(verdict.scaling!.signal, /^hikaricp pool orders: its waiting callers/);
  // 0.7 of 2 cores is 35%: ceil(1 × 35 ÷ 70) = 1.
  assert.match(
    verdict.scaling!.cpuAutoscaler!,
    /sees 35% at the plateau and keeps ceil\(1 × 35 ÷ 70\) = 1 replica/,
  );
  const cpuBound = decideVerdict(inputs(cases[2]!.rows));
  assert.equal(cpuBound.scaling!.cpuAutoscaler, null);
});

test('a pool whose meters give only a wait time (Go database/sql) is full when the wait jumps', () => {
  const goPool = (inUse: number, waitMs: number) =>
    res('go sql orders', 'slots', 'pool', 1, { inUseMean: inUse, capacity: 4, waitMsMean: waitMs });
  const verdict = decideVerdict(
    inputs([row(20, 20, [goPool(1, 0)]), row(60, 60, [goPool(3, 0.1)]), row(100, 78, [goPool(3.9, 180)])]),
  );
  assert.equal(verdict.firstLimit.resource, 'pool');
  assert.match(
    verdict.evidence.saturated[0]!,
    /go sql orders 3\.9 of 4 connections in use \(98%\), wait 180 ms \(0 ms at r020\)/,
  );
});

test('a queue that grew behind a saturated CPU is not the first limit: the CPU that drains it is', () => {
  const queue = (depth: number) =>
    res('executor http queue', 'queue', 'queue', 0, {
      inUseMean: depth,
      inUseMax: depth * 2,
      capacity: null,
    });
  const verdict = decideVerdict(
    inputs([
      row(15, 15, [threads(1.2, 8, 0), queue(0), cpu(0.3)]),
      row(30, 30, [threads(2.5, 8, 0), queue(0.1), cpu(0.6)]),
      row(70, 44, [
        threads(6.3, 8, 23),
        queue(23),
        res('process cpu', 'cpu', 'cpu', 0, { inUseMean: 0.9, capacity: 1 }),
      ]),
    ]),
  );
  assert.equal(verdict.firstLimit.resource, 'cpu');
  assert.ok(verdict.evidence.saturated.some((e) => /^also full: executor http queue depth mean 23/.test(e)));
});

test('a full CPU whose ceiling is the plateau is named before threads with no hold time that filled waiting for it', () => {
  // The JVM case: 40 ms of CPU per request on one core (25/s). Below the plateau the thread
  // pool's active count reads 0 (its meters give no hold time, so no ceiling); at the plateau
  // all 8 threads are busy, each waiting for the one core, which is 99% used.
  const cpu1 = (cores: number) => res('process cpu', 'cpu', 'cpu', 0, { inUseMean: cores, capacity: 1 });
  const verdict = decideVerdict(
    inputs([
      row(8, 8, [threads(0, 8, 0), pool(0, 0), cpu1(0.32)]),
      row(16, 16, [threads(0, 8, 0), pool(0, 0), cpu1(0.64)]),
      row(40, 23.5, [threads(8, 8, 30), pool(0, 0), cpu1(0.99)]),
    ]),
  );
  // The same when the CPU per request grew under the load, so the ceiling predicted from the
  // quiet steps (25/s) is 14 % above the plateau, and the threads read 81 % busy with callers
  // waiting (the suite's own run of the JVM case).
  const grown = decideVerdict(
    inputs([
      row(8, 8, [threads(0, 8, 0), pool(0, 0), cpu1(0.32)]),
      row(16, 16, [threads(0, 8, 0), pool(0, 0), cpu1(0.64)]),
      row(40, 22, [threads(6.5, 8, 19), pool(0.5, 0), cpu1(0.94)]),
    ]),
  );
  assert.equal(grown.firstLimit.name, 'process cpu', grown.firstLimit.summary);
  assert.equal(verdict.firstLimit.resource, 'cpu', verdict.firstLimit.summary);
  assert.equal(verdict.firstLimit.name, 'process cpu');
  assert.ok(verdict.evidence.saturated.some((e) => /^also full: executor http 8 of 8 threads/.test(e)));
});

test('a pgbouncer pool whose exporter gives only waiting clients is full when clients wait, and deeper than the HikariCP pool in front of it', () => {
  const bouncer = (waiting: number) =>
    res('pgbouncer pool app/app', 'slots', 'pool', 2, {
      inUseMean: 0,
      capacity: 2,
      waitingMean: waiting,
      waitingMax: waiting,
      utilisationPct: null,
      inUseMax: null,
    });
  const hikari = (inUse: number, pending: number) =>
    res('hikaricp pool orders', 'slots', 'pool', 1, {
      inUseMean: inUse,
      capacity: 8,
      waitingMean: pending,
      waitingMax: pending,
      holdMsMean: 52,
    });
  const verdict = decideVerdict(
    inputs([
      row(10, 10, [hikari(0.5, 0), bouncer(0)]),
      row(30, 30, [hikari(1.6, 0), bouncer(0.2)]),
      row(60, 38, [hikari(8, 20), bouncer(6)]),
    ]),
  );
  assert.equal(verdict.firstLimit.name, 'pgbouncer pool app/app');
  assert.ok(verdict.evidence.saturated.some((e) => /^also full: hikaricp pool orders 8 of 8/.test(e)));
  // pgbouncer's meters give no hold time: it had no ceiling to miss.
  assert.match(
    verdict.prediction!.finding,
    /but pgbouncer pool app\/app was full first, at 38\/s: its meters give no hold time, so it had no predicted ceiling$/,
  );
});
