import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceStepFigures, SaturationRow } from '../../contract/index.ts';
import { scalingOf } from './scaling.ts';
import type { LimitFinding } from './steps-limit.ts';
import { plateauAt, rateRow, resourceFigures, serverFigures } from './test-rows.ts';

const limit = (resource: LimitFinding['resource'], name?: string): LimitFinding => ({
  resource,
  summary: '',
  saturated: [],
  flat: [],
  ...(name !== undefined ? { name } : {}),
});

/** A plateau at r070 whose row carries `plateau`'s fields. */
const plateauWith = (plateau: Partial<SaturationRow>) =>
  plateauAt([rateRow(20, 20), rateRow(70, 62, plateau)], 1);

/** A published CPU busy at `pct` % of its capacity, at `position` on the request path (3: the database's). */
const publishedCpu = (pct: number, position = 0): ResourceStepFigures =>
  resourceFigures(position === 3 ? 'postgres cpu' : 'process cpu', 'cpu', 'cpu', {
    inUseMean: pct / 100,
    capacity: 1,
    position,
  });

test("the signal to scale on is the first limit's own saturation, not its CPU", () => {
  const found = plateauWith({});
  const cases: { says: string; limit: LimitFinding; signal: string | null }[] = [
    // plateau's own pool.
    {
      says: 'own pool',
      limit: limit('pool'),
      signal:
        'the pool: requests waiting for a connection and their wait (db_pool_waiting_requests), not CPU',
    },
    // A published pool or thread pool, by its own name.
    {
      says: 'named threads',
      limit: limit('threads', 'executor http'),
      signal: 'executor http: its waiting callers and wait time (not CPU)',
    },
    // A queue, named or not.
    { says: 'queue', limit: limit('queue', 'bus queue'), signal: 'bus queue: its depth against its cap' },
    { says: 'unnamed queue', limit: limit('queue'), signal: 'the queue: its depth against its cap' },
    // The database, by its wait events when its meters name it.
    {
      says: 'named database',
      limit: limit('database', 'postgres'),
      signal: 'postgres: backends waiting, by wait event',
    },
    {
      says: 'own database',
      limit: limit('database'),
      signal: "the database's time per query and its waits, not the service's CPU",
    },
    // The admission gate.
    {
      says: 'admission',
      limit: limit('admission'),
      signal: "the admission gate's refusals (503, reason admission) and its busy time",
    },
    // No resource named: nothing to scale on.
    { says: 'unlisted', limit: limit('unlisted'), signal: null },
    { says: 'generator', limit: limit('generator'), signal: null },
  ];
  for (const c of cases) assert.equal(scalingOf(c.limit, found)?.signal ?? null, c.signal, c.says);
});

test('what a CPU-targeted autoscaler (70 %) would do at the plateau when the CPU is not the limit', () => {
  const cases: {
    says: string;
    limit: LimitFinding;
    plateau: Partial<SaturationRow>;
    cpuAutoscaler: string | null;
  }[] = [
    // plateau's own CPU at 30 %: ceil(30 ÷ 70) = 1, it keeps one replica while requests wait.
    {
      says: 'own CPU, low',
      limit: limit('pool'),
      plateau: { server: serverFigures({ cpuPct: 30 }) },
      cpuAutoscaler:
        'a CPU-targeted autoscaler (target 70%) sees 30% at the plateau and keeps ceil(1 × 30 ÷ 70) = 1 replica: it would not scale out while requests wait for the pool',
    },
    // A published CPU at 150 % (1.5 cores): ceil(150 ÷ 70) = 3 replicas, for the wrong reason.
    {
      says: 'published CPU, high',
      limit: limit('threads', 'executor http'),
      plateau: { server: null, resources: [publishedCpu(150)] },
      cpuAutoscaler:
        'a CPU-targeted autoscaler (target 70%) sees 150% at the plateau and asks for ceil(1 × 150 ÷ 70) = 3 replicas, for CPU, not for the executor http that is full',
    },
    // The busiest of the service's CPUs, not the database's (position 3): 40 %, not 95 %.
    {
      says: "not the database's CPU",
      limit: limit('pool', 'hikaricp pool orders'),
      plateau: { server: null, resources: [publishedCpu(40), publishedCpu(95, 3)] },
      cpuAutoscaler:
        'a CPU-targeted autoscaler (target 70%) sees 40% at the plateau and keeps ceil(1 × 40 ÷ 70) = 1 replica: it would not scale out while requests wait for the hikaricp pool orders',
    },
    // Only the database's CPU is known: the service's is not, and nothing is said.
    {
      says: 'only the database CPU',
      limit: limit('pool', 'hikaricp pool orders'),
      plateau: { server: null, resources: [publishedCpu(95, 3)] },
      cpuAutoscaler: null,
    },
    // The CPU is the limit: a CPU-targeted autoscaler fits it, nothing to warn of.
    {
      says: 'CPU is the limit',
      limit: limit('cpu'),
      plateau: { server: serverFigures({ cpuPct: 95 }) },
      cpuAutoscaler: null,
    },
  ];
  for (const c of cases) {
    assert.equal(scalingOf(c.limit, plateauWith(c.plateau))?.cpuAutoscaler, c.cpuAutoscaler, c.says);
  }
});
