import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ResourceSeries, ResourceStepFigures, SaturationRow } from '../../contract/index.ts';
import { decideVerdict } from '../verdict.ts';

const T0 = 1_800_000_000;

/** A HikariCP pool's figures over a step. */
function pool(inUse: number, waiting: number): ResourceStepFigures {
  return {
    id: 'hikaricp pool orders',
    name: 'hikaricp pool orders',
    kind: 'slots',
    role: 'pool',
    position: 1,
    seconds: 10,
    inUseMean: inUse,
    inUseMax: inUse,
    capacity: 4,
    utilisationPct: (inUse / 4) * 100,
    waitingMean: waiting,
    waitingMax: waiting,
    waitMsMean: null,
    holdMsMean: 50,
    refused: null,
    acquiredPerSec: null,
  };
}

/** A step of 10 s starting `at` seconds after T0. */
function row(
  step: string,
  offered: number | null,
  sent: number,
  served: number,
  at: number,
  resources: ResourceStepFigures[],
): SaturationRow {
  return {
    step,
    offeredPerSec: offered,
    sentPerSec: sent,
    servedPerSec: served,
    servedSource: 'client',
    seconds: 10,
    requests: sent * 10,
    latencyMs: { med: 55, p95: 60, p99: 70, max: 90 },
    window: { startS: T0 + at, endS: T0 + at + 10 },
    failures: { shed: 0, rateLimited: 0, serverErrors: 0, clientErrors: 0, timeouts: 0, networkErrors: 0 },
    failureRate: 0,
    dropped: 0,
    generator: { lagMsMax: 2, cpuPctMax: 20 },
    server: null,
    resources,
    invalid: null,
  };
}

test("without GET /steps, recovery is measured on the first limit's own published waiting", () => {
  // 40 s of load, then the backlog of 30 waiting drains at 10 a second into a recovery at 20/s.
  const waiting = [
    ...Array(10).fill(0),
    ...Array(10).fill(0.1),
    ...Array(10).fill(10),
    ...Array(10).fill(30),
    30,
    20,
    10,
    0.4,
    0.2,
    0.2,
    0.3,
    0.2,
    0.2,
    0.3,
    0.2,
    0.2,
    0.3,
    0.2,
    0.2,
  ];
  const series: ResourceSeries = {
    id: 'hikaricp pool orders',
    name: 'hikaricp pool orders',
    kind: 'slots',
    role: 'pool',
    family: 'hikaricp',
    source: 'metrics http://127.0.0.1:8080/actuator/prometheus',
    onFull: 'waits',
    position: 1,
    seconds: waiting.map((w, i) => ({
      t: T0 + i,
      inUse: w > 1 ? 4 : 1,
      capacity: 4,
      waiting: w,
      waitMs: null,
      holdMs: 50,
      refused: null,
      acquired: null,
    })),
  };
  const rows = [
    row('r020', 20, 20, 20, 0, [pool(1, 0)]),
    row('r040', 40, 40, 40, 10, [pool(2, 0.1)]),
    row('r080', 80, 80, 78, 20, [pool(4, 10)]),
    row('r120', 120, 120, 79, 30, [pool(4, 30)]),
    { ...row('drain', null, 20, 40, 40, [pool(3, 10)]), window: { startS: T0 + 40, endS: T0 + 45 } },
    { ...row('recovery', null, 20, 20, 45, [pool(1, 0.2)]), window: { startS: T0 + 45, endS: T0 + 55 } },
  ];
  const verdict = decideVerdict({
    rows,
    settings: null,
    timeline: [],
    objectives: { p95Ms: 250, failRate: 0.01 },
    database: null,
    recoveryRatePerSec: 20,
    resources: [series],
  });
  assert.equal(verdict.firstLimit.name, 'hikaricp pool orders');
  // The ramp ends at T0 + 40; waiting is back within the recovery rate's own level (≤ 0.3) at T0 + 44.
  assert.equal(verdict.recovery.seconds, 4, verdict.recovery.summary);
  assert.match(verdict.recovery.summary, /^back to the recovery rate's own level \(waiting ≤ 0\.3\)/);
  assert.equal(verdict.backlog?.queuedAtRampEnd, 30);
});
