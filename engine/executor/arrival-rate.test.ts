import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { waitUntil } from '../../test/helpers/wait-until.ts';
import { TestRuntime } from '../js/runtime.ts';
import { MetricRegistry } from '../metrics/registry.ts';
import { ExecutionTuple } from '../schedule/execution-segment.ts';
import { monotonicMs, VuPool } from './executor.ts';
import type { ConstantArrivalRateScenario } from './registry.ts';
import { createExecutor } from './registry.ts';

const MS = 1e6;

/**
 * One VU, starts at 0 and `gapMs` (default 20): the second start needs the first iteration
 * to be over.
 */
function twoStarts(gapMs = 20): ConstantArrivalRateScenario {
  return {
    name: 'pair',
    executor: 'constant-arrival-rate',
    exec: 'default',
    env: {},
    tags: {},
    startTimeNs: 0,
    gracefulStopNs: 1000 * MS,
    rate: 1,
    timeUnitNs: gapMs * MS,
    durationNs: 2 * gapMs * MS,
    preAllocatedVUs: 1,
    maxVUs: 1,
  };
}

function newRuntime(): TestRuntime {
  return new TestRuntime({
    registry: new MetricRegistry(),
    logger: { log: () => undefined },
    env: {},
    runTags: {},
    outputs: [],
  });
}

function busyFor(ms: number): void {
  const until = monotonicMs() + ms;
  while (monotonicMs() < until) {
    // The process is busy, as it is while it opens a test's first connections.
  }
}

test('a VU whose iteration finished in I/O not yet handled takes the next start instead of dropping it', async (t) => {
  // A socket pair in this process: what one end writes is in the other's receive buffer at
  // once, and is handled when the event loop next polls, like a response already received.
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address() as { port: number };
  const accepted = once(server, 'connection') as Promise<[Socket]>;
  const client = connect(address.port, '127.0.0.1');
  const [peer] = await accepted;
  t.after(() => {
    client.destroy();
    peer.destroy();
    server.close();
  });

  const runtime = newRuntime();
  const startedAt: number[] = [];
  let origin = 0;
  const exec = () => {
    startedAt.push(monotonicMs() - origin);
    if (startedAt.length > 1) return undefined;
    // The first iteration's "response" arrives at once, but the process is then busy past
    // the second start (due at 100 ms, its timer armed already), so that timer fires before
    // the loop polls the socket: the busy spell runs in the check phase, timers come next.
    // The spell must begin before the second start is due: 100 ms leaves a loaded machine
    // the time to reach the check phase.
    const finished = once(peer, 'data');
    setImmediate(() => {
      client.write('x');
      busyFor(130);
    });
    return finished;
  };
  const tuple = ExecutionTuple.create();
  const executor = createExecutor(
    { runtime, config: twoStarts(100), tuple, vus: new VuPool(runtime, tuple), exec },
    {},
  );
  origin = monotonicMs();
  await executor.run();

  assert.equal(executor.stats.dropped, 0, 'the finished VU was idle in time for the second start');
  assert.equal(executor.stats.iterations, 2);
  assert.equal(startedAt.length, 2);
  assert.ok(startedAt[1]! >= 130, `the second start ran late, after the busy spell (${startedAt[1]} ms)`);
});

test('a start is still dropped when its VU is busy after the I/O already received is handled', async () => {
  const runtime = newRuntime();
  let calls = 0;
  // The first iteration ends only once the second start was decided (dropped, or, were the
  // VU waited for, never within the deadline): not at a time that a late timer could move
  // past the second start's own.
  const exec = () => {
    calls++;
    return waitUntil(() => executor.stats.dropped > 0, 'the second start dropped', { everyMs: 1 }).catch(
      () => undefined,
    );
  };
  const tuple = ExecutionTuple.create();
  const executor = createExecutor(
    { runtime, config: twoStarts(), tuple, vus: new VuPool(runtime, tuple), exec },
    {},
  );
  await executor.run();
  assert.equal(executor.stats.dropped, 1);
  assert.equal(calls, 1);
  assert.equal(executor.stats.iterations, 1);
});

test('a stopped test ends a sparse scenario at once, not at its next planned start', async () => {
  const runtime = newRuntime();
  // One start a minute for ten minutes: the next start after the first is 60 s away.
  const config: ConstantArrivalRateScenario = {
    ...twoStarts(),
    rate: 1,
    timeUnitNs: 60_000 * MS,
    durationNs: 600_000 * MS,
  };
  const tuple = ExecutionTuple.create();
  const executor = createExecutor(
    { runtime, config, tuple, vus: new VuPool(runtime, tuple), exec: () => undefined },
    {},
  );
  const started = monotonicMs();
  const running = executor.run();
  setTimeout(() => runtime.stop({ kind: 'signal', message: 'stopped by signal' }), 50);
  await running;
  assert.equal(executor.stats.iterations, 1);
  assert.ok(
    monotonicMs() - started < 5000,
    `ended ${Math.round(monotonicMs() - started)} ms after its start`,
  );
});
