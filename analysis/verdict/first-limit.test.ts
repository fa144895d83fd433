import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SaturationRow, ServiceSettings } from '../../contract/index.ts';
import { DEFAULT_CRITERIA } from './criteria.ts';
import { firstLimitOf } from './first-limit.ts';
import type { VerdictInputs } from './inputs.ts';
import { plateauAt, rateRow, resourceFigures, serverFigures, verdictInputs } from './test-rows.ts';

const SETTINGS: ServiceSettings = { poolMax: 4, queueMax: 8, acquireTimeoutMs: 200, shed: true, extra: {} };
const POOL_FULL = serverFigures({ checkedOutPct: 99, waitingMean: 6.8, waitingMax: 8, waitP95Ms: 190 });

const hikari = (inUseMean: number, waitingMean: number) =>
  resourceFigures('hikaricp pool orders', 'slots', 'pool', {
    inUseMean,
    capacity: 4,
    waitingMean,
    position: 1,
  });
const threads = (inUseMean: number, waitingMean: number) =>
  resourceFigures('executor http', 'slots', 'threads', { inUseMean, capacity: 8, waitingMean });

/** r020 with `base`, then the plateau at r070 (62 served/s) with `plateau`. */
function firstLimit(
  plateau: Partial<SaturationRow>,
  base: Partial<SaturationRow> = {},
  overrides: Partial<VerdictInputs> = {},
) {
  const rows = [rateRow(20, 20, base), rateRow(70, 62, plateau)];
  const inputs = { ...verdictInputs(rows, { settings: SETTINGS, ...overrides }), criteria: DEFAULT_CRITERIA };
  return firstLimitOf(inputs, plateauAt(rows, 1), [], []);
}

test('a plateau row that is not evidence names the generator, or is inconclusive for want of VUs', () => {
  const cases: { says: string; plateau: Partial<SaturationRow>; resource: string; summary: string }[] = [
    // The generator's CPU at 97 %: it could not send the load.
    {
      says: 'generator CPU',
      plateau: { invalid: 'generator CPU reached 97%', generator: { lagMsMax: 2, cpuPctMax: 97 } },
      resource: 'generator',
      summary: 'the load generator, not the service: generator CPU reached 97%',
    },
    // Its event loop 150 ms late.
    {
      says: 'generator lag',
      plateau: {
        invalid: 'generator event-loop lag reached 150 ms',
        generator: { lagMsMax: 150, cpuPctMax: 40 },
      },
      resource: 'generator',
      summary: 'the load generator, not the service: generator event-loop lag reached 150 ms',
    },
    // A healthy generator that dropped 40 starts: too few VUs, which says nothing of the service.
    {
      says: 'too few VUs',
      plateau: { invalid: 'dropped 40 starts', dropped: 40, server: POOL_FULL },
      resource: 'inconclusive',
      summary:
        'inconclusive: r070 dropped 40 starts because every VU was busy (vus_max 50), so the service was not given that load; rerun with more VUs (plateau run sizes them and reruns by itself)',
    },
  ];
  for (const c of cases) {
    const limit = firstLimit(c.plateau, {}, { vusMax: 50 });
    assert.equal(limit.resource, c.resource, c.says);
    assert.equal(limit.summary, c.summary, c.says);
    assert.deepEqual(limit.saturated, [c.plateau.invalid], c.says);
  }
});

test("plateau's own figures decide when they name a resource; the published ones decide when they do not", () => {
  const quietMeters = { resources: [hikari(1, 0), threads(2, 0)] };
  const cases: {
    says: string;
    plateau: Partial<SaturationRow>;
    base?: Partial<SaturationRow>;
    resource: string;
    name: string | undefined;
    saturated: RegExp;
    flat?: RegExp;
  }[] = [
    // GET /steps alone, the pool full: the pool.
    {
      says: 'steps alone',
      plateau: { server: POOL_FULL },
      resource: 'pool',
      name: undefined,
      saturated: /^pool 99%/,
    },
    // Published meters alone, HikariCP full: named by its own name.
    {
      says: 'meters alone',
      plateau: { server: null, resources: [hikari(4, 3), threads(4, 0)] },
      base: { server: null, ...quietMeters },
      resource: 'pool',
      name: 'hikaricp pool orders',
      saturated: /^hikaricp pool orders 4 of 4 connections in use/,
      flat: /executor http 4 of 8 threads/,
    },
    // Both name something: plateau's own pool decides, the full executor is evidence beside it.
    {
      says: 'both name one',
      plateau: { server: POOL_FULL, resources: [hikari(1, 0), threads(8, 5)] },
      base: quietMeters,
      resource: 'pool',
      name: undefined,
      saturated: /^pool 99%.* \| executor http 8 of 8 threads in use/,
    },
    // plateau's own found nothing full, the meters found HikariCP: the meters decide, with both flat lists.
    {
      says: 'steps unlisted, meters name one',
      plateau: { resources: [hikari(4, 3), threads(4, 0)] },
      base: quietMeters,
      resource: 'pool',
      name: 'hikaricp pool orders',
      saturated: /^hikaricp pool orders/,
      flat: /executor http 4 of 8 threads.* \| query p95 51 ms/,
    },
    // Neither found anything full: unlisted, with everything flat.
    {
      says: 'both unlisted',
      plateau: { resources: [hikari(1, 0), threads(2, 0)] },
      base: quietMeters,
      resource: 'unlisted',
      name: undefined,
      saturated: /^$/,
      flat: /pool 20% checked out.* \| hikaricp pool orders 1 of 4/,
    },
  ];
  for (const c of cases) {
    const limit = firstLimit(c.plateau, c.base);
    assert.equal(limit.resource, c.resource, c.says);
    assert.equal(limit.name, c.name, c.says);
    assert.match(limit.saturated.join(' | '), c.saturated, c.says);
    if (c.flat) assert.match(limit.flat.join(' | '), c.flat, c.says);
  }
});

test('without GET /steps or published meters the resource is unknown', () => {
  const limit = firstLimit({ server: null }, { server: null });
  assert.deepEqual(limit, {
    resource: 'unlisted',
    summary: 'throughput flattened at 62/s; without the server side the resource is unknown',
    saturated: [],
    flat: [],
  });
});
