import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TestRuntime } from '../js/runtime.ts';
import { MetricRegistry } from '../metrics/registry.ts';
import { ExecutionTuple, parseSegment, parseSequence } from '../schedule/execution-segment.ts';
import { monotonicMs, ScenarioExecutor, VuPool } from './executor.ts';
import type { ScenarioConfig } from './registry.ts';
import { maxPlannedVUs, plannedVUs } from './registry.ts';

const S = 1e9;
const base = { exec: 'default', env: {}, tags: {}, gracefulStopNs: 0 };
const whole = ExecutionTuple.create();

function vus(
  name: string,
  count: number,
  startS: number,
  durationS: number,
  gracefulStopS = 0,
): ScenarioConfig {
  return {
    ...base,
    name,
    executor: 'constant-vus',
    vus: count,
    startTimeNs: startS * S,
    durationNs: durationS * S,
    gracefulStopNs: gracefulStopS * S,
  };
}

test('plannedVUs: preAllocatedVUs for arrival rates, the most VUs for ramping-vus, scaled by segment', () => {
  const car: ScenarioConfig = {
    ...base,
    name: 'car',
    executor: 'constant-arrival-rate',
    startTimeNs: 0,
    rate: 10,
    timeUnitNs: S,
    durationNs: S,
    preAllocatedVUs: 7,
    maxVUs: 50,
  };
  assert.equal(plannedVUs(car, whole), 7, 'maxVUs beyond preAllocatedVUs are initialized on demand');
  const ramp: ScenarioConfig = {
    ...base,
    name: 'ramp',
    executor: 'ramping-vus',
    startTimeNs: 0,
    startVUs: 2,
    stages: [
      { durationNs: S, target: 9 },
      { durationNs: S, target: 0 },
    ],
    gracefulRampDownNs: 0,
  };
  assert.equal(plannedVUs(ramp, whole), 9);
  const half = ExecutionTuple.create(parseSegment('0:1/2'), parseSequence('0,1/2,1'));
  assert.equal(plannedVUs(vus('v', 5, 0, 1), half), 3, 'this segment’s share, k6’s striping');
});

test('maxPlannedVUs: overlapping scenarios add up, one after another they share VUs', () => {
  assert.equal(maxPlannedVUs([vus('a', 3, 0, 1), vus('b', 4, 0.5, 1)], whole), 7, 'overlap');
  assert.equal(maxPlannedVUs([vus('a', 3, 0, 1), vus('b', 4, 2, 1)], whole), 4, 'sequential');
  assert.equal(
    maxPlannedVUs([vus('a', 3, 0, 1), vus('b', 4, 1, 1)], whole),
    4,
    'a scenario ending when another starts hands its VUs over',
  );
  assert.equal(
    maxPlannedVUs([vus('a', 3, 0, 1, 1), vus('b', 4, 1.5, 1)], whole),
    7,
    'gracefulStop keeps the first scenario’s VUs',
  );
  assert.equal(maxPlannedVUs([], whole), 0);
});

test('VuPool: initialized VUs first, returned VUs reused oldest first, new ones counted in vus_max', () => {
  const runtime = new TestRuntime({
    registry: new MetricRegistry(),
    logger: { log: () => undefined },
    env: {},
    runTags: {},
    outputs: [],
  });
  const pool = new VuPool(runtime, whole);
  pool.initialize(2);
  assert.equal(runtime.vusInitialized, 2);
  const first = pool.acquire();
  const second = pool.acquire();
  const third = pool.acquire();
  assert.deepEqual(
    [first, second, third].map((vu) => vu.idInInstance),
    [1, 2, 3],
  );
  assert.equal(runtime.vusInitialized, 3, 'a VU beyond the pool is initialized');
  pool.release(second);
  pool.release(first);
  assert.equal(pool.acquire(), second, 'returned longest ago comes first');
  assert.equal(pool.acquire(), first);
  pool.initialize(3);
  assert.equal(pool.initialized, 3, 'initialize tops up to a count, it does not add');
});

test('a scenario of a worker that woke late for the coordinator’s moment starts its clock at that moment', () => {
  const runtime = new TestRuntime({
    registry: new MetricRegistry(),
    logger: { log: () => undefined },
    env: {},
    runTags: {},
    outputs: [],
  });
  class Started extends ScenarioExecutor {
    origin = 0;
    async run(): Promise<void> {
      this.origin = this.markStarted();
    }
  }
  const scenario = vus('late', 1, 2, 10);
  const start = (atMs: number) => {
    runtime.scenariosAtMs = atMs;
    const executor = new Started(
      { runtime, config: scenario, tuple: whole, vus: new VuPool(runtime, whole), exec: () => undefined },
      10 * S,
      {},
    );
    void executor.run();
    return executor;
  };
  // Each start is bracketed by clock readings, so the checks hold however long the process
  // waits between lines on a busy machine (bounds of a few ms on elapsed time did not).
  // One process: its own start.
  let before = monotonicMs();
  const alone = start(Number.NaN);
  let after = monotonicMs();
  assert.ok(before <= alone.origin && alone.origin <= after, 'its clock starts when it starts');
  // A worker 2.005 s after the moment, for a startTime of 2 s: its clock starts 5 ms back.
  before = monotonicMs();
  const late = start(performance.timeOrigin + before - 2005);
  after = monotonicMs();
  const back = late.origin - (before - 5);
  assert.ok(back >= 0 && back <= after - before, `origin ${before - late.origin} ms back`);
  assert.ok(
    Math.abs(late.startTimeMs - (performance.timeOrigin + before - 5)) < 0.01,
    'at the moment + startTime',
  );
  // Early (its startTime not yet reached) is never moved forward: the scenario slept for it.
  before = monotonicMs();
  const early = start(performance.timeOrigin + before - 1000);
  after = monotonicMs();
  assert.ok(before <= early.origin && early.origin <= after);
});
