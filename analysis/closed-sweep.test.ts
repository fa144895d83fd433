import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { SweepRow } from '../contract/index.ts';
import { decideSweep, type SweepInputs } from './closed-sweep.ts';

function level(
  clients: number,
  goodput: number,
  completed: number | null,
  extra: Partial<SweepRow> = {},
): SweepRow {
  return {
    step: `c${String(clients).padStart(3, '0')}`,
    clients,
    seconds: 10,
    attemptsPerSec: goodput,
    goodputPerSec: goodput,
    completedPerSec: completed,
    expired: 0,
    timeouts: 0,
    shed: 0,
    retries: 0,
    latencyMs: { med: 50, p95: 90, mean: 60 },
    okP95Ms: 90,
    inRequests: { measured: clients, predicted: clients },
    server: { checkedOutPct: 100, waitingMean: clients - 2, waitingMax: clients, cpuPct: 30 },
    ...extra,
  };
}

const INPUTS: SweepInputs = {
  recoveryVus: null,
  deadlineMs: 250,
  goodputBySecond: () => [],
  recoveryWindowS: null,
};

test('the peak is the level with the most goodput, and the inversion the levels far below it after it', () => {
  const v = decideSweep(
    [level(2, 19, 19), level(8, 39, 39), level(12, 3.1, 39, { timeouts: 400 }), level(20, 0.1, 38.5)],
    INPUTS,
  );
  assert.equal(v.peak?.clients, 8);
  assert.deepEqual(
    v.inversion.map((r) => r.clients),
    [12, 20],
  );
  assert.equal(v.summary, '8 clients: 39/s within the deadline (deadline 250 ms); 20 clients: 0.1/s');
  assert.match(
    v.pastPeak,
    /the service stayed busy \(38.5 queries\/s, pool 100%\) on work for callers who had gone/,
  );
  assert.match(v.limit, /^pool 100% checked out/);
});

test('goodput that stays within 80 % of the peak is no inversion', () => {
  const v = decideSweep([level(2, 19, 19), level(8, 39, 39), level(20, 33, 39)], INPUTS);
  assert.deepEqual(v.inversion, []);
  assert.match(v.pastPeak, /^goodput held: 20 clients still got 33\/s/);
});

test("Little's Law: fewer requests in flight than clients is named as clients waiting to retry", () => {
  const v = decideSweep(
    [level(4, 20, 20), level(10, 10, 20, { inRequests: { measured: 6, predicted: 6.1 } })],
    INPUTS,
  );
  assert.match(v.littlesLaw, /^N = X × R holds at every level/);
  assert.match(v.littlesLaw, /clients waiting to retry/);
});

test('recovery: the first second from which goodput stayed at 80 % of what that many clients got', () => {
  const rows = [level(4, 20, 20), level(16, 1, 20), { ...level(4, 12, 20), step: 'recovery' }];
  const v = decideSweep(rows, {
    ...INPUTS,
    recoveryVus: 4,
    recoveryWindowS: { fromS: 100, toS: 110 },
    // the queue of abandoned work drains for 4 s, then the clients get their 20/s back
    goodputBySecond: () => [0, 0, 1, 0, 19, 20, 21, 20, 19, 20],
  });
  assert.equal(v.recovery.seconds, 4);
  assert.match(v.recovery.summary, /after 4 s/);
});

test('no goodput anywhere names no peak', () => {
  const v = decideSweep([level(2, 0, 10)], INPUTS);
  assert.equal(v.peak, null);
  assert.equal(v.summary, 'no level had any goodput');
});
