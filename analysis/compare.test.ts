import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AnalysisResult, RunManifest } from '../contract/index.ts';
import { compareRuns } from './compare.ts';

/** A run reduced to what a comparison reads: its service settings, plateau and first limit. */
function run(service: Record<string, number>, plateau: number, limit: string) {
  const manifest = {
    service,
    load: { stepsPerSec: [20, 40, 60], holdSeconds: 10, rampSeconds: 1, jitterSeconds: 0 },
    engine: { name: 'embedded' },
    target: 'reference statement service',
  } as unknown as RunManifest;
  const analysis = {
    table: [],
    verdict: {
      plateau: { step: 'r060', servedPerSec: plateau, offeredPerSec: 60 },
      firstLimit: { resource: limit, summary: '' },
    },
  } as unknown as AnalysisResult;
  return { analysis, manifest };
}

test('raising a setting that sizes another resource than the first limit moves nothing, as predicted', () => {
  // CPU_MS=12: the CPU is the first limit; POOL_MAX 4 -> 8 moved it 1.04x (runs 20261202-050758, -050908).
  const c = compareRuns(
    run({ POOL_MAX: 4, CPU_MS: 12 }, 56.2, 'cpu'),
    run({ POOL_MAX: 8, CPU_MS: 12 }, 58.5, 'cpu'),
  );
  assert.equal(c.confirmedBy, null);
  assert.equal(
    c.summary,
    'POOL_MAX alone did not move the plateau (1.04x), as the first limit predicts: it sizes the pool, and the first limit is cpu',
  );
});

test('a change to the first limit that hands it to the next resource confirms it, even under 1.2x', () => {
  // CPU_MS 12 -> 4: 56.2/s -> 66.3/s, and the pool became the first limit (run 20261202-051017).
  const c = compareRuns(
    run({ POOL_MAX: 4, CPU_MS: 12 }, 56.2, 'cpu'),
    run({ POOL_MAX: 4, CPU_MS: 4 }, 66.3, 'pool'),
  );
  assert.equal(
    c.confirmedBy,
    'CPU_MS 12 -> 4 alone moved the plateau to 66.3/s (1.18x), where the pool became the first limit',
  );
});

test('a change to the named limit that moves nothing puts the verdict in doubt', () => {
  const c = compareRuns(run({ POOL_MAX: 4 }, 70, 'pool'), run({ POOL_MAX: 8 }, 71, 'pool'));
  assert.equal(c.confirmedBy, null);
  assert.match(c.summary, /the pool was not the limit after all/);
});

/** A run of a service plateau did not write: its env, plateau, first limit by name, and its published resources' capacities at the first step. */
function ownRun(
  env: Record<string, string>,
  plateau: number,
  limit: { resource: string; name: string },
  capacities: Record<string, number>,
) {
  const manifest = {
    service: null,
    serviceProcess: {
      env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, { value: v, source: 'config' }])),
    },
    load: { stepsPerSec: [20, 40, 60], holdSeconds: 10, rampSeconds: 1, jitterSeconds: 0 },
    engine: { name: 'embedded' },
    target: 'http://127.0.0.1:8080/orders',
  } as unknown as RunManifest;
  const analysis = {
    table: [
      {
        step: 'r020',
        offeredPerSec: 20,
        servedPerSec: 20,
        latencyMs: { p95: 60 },
        resources: Object.entries(capacities).map(([name, capacity]) => ({ name, capacity })),
      },
    ],
    verdict: {
      plateau: { step: 'r060', servedPerSec: plateau, offeredPerSec: 60 },
      firstLimit: { resource: limit.resource, name: limit.name, summary: '' },
    },
  } as unknown as AnalysisResult;
  return { analysis, manifest };
}

test("your own service: the setting sizes the published resource whose capacity changed, so confirm reads its env's names", () => {
  const pool = { resource: 'pool', name: 'hikaricp pool orders' };
  // POOL_MAX 4 -> 8 doubled HikariCP's max and the plateau: the pool is confirmed.
  const moved = compareRuns(
    ownRun({ POOL_MAX: '4' }, 77, pool, { 'hikaricp pool orders': 4, 'executor http': 8 }),
    ownRun({ POOL_MAX: '8' }, 140, pool, { 'hikaricp pool orders': 8, 'executor http': 8 }),
  );
  assert.equal(moved.confirmedBy, 'POOL_MAX 4 -> 8 alone moved the plateau to 140/s (1.8x)');
  assert.equal(moved.limitBefore, 'hikaricp pool orders');
  // THREADS 8 -> 16 sized the executor, not the pool that limits: nothing moved, as predicted.
  const still = compareRuns(
    ownRun({ THREADS: '8' }, 77, pool, { 'hikaricp pool orders': 4, 'executor http': 8 }),
    ownRun({ THREADS: '16' }, 78, pool, { 'hikaricp pool orders': 4, 'executor http': 16 }),
  );
  assert.equal(
    still.summary,
    'THREADS alone did not move the plateau (1.01x), as the first limit predicts: it sizes the executor http, and the first limit is hikaricp pool orders',
  );
});
