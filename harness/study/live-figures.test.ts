import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { ServerLiveReport } from '../../contract/index.ts';
import { LiveFigures, perSecond, progressFromSample } from './live-figures.ts';
import { LoadApiClient, type LoadCounters } from './load-api.ts';
import { plannedNow } from './study.ts';
import type { StudyPlan } from './study-options.ts';

const counters = (atMs: number, httpReqs: number, droppedIterations = 0): LoadCounters => ({
  atMs,
  status: 7,
  vus: 3,
  httpReqs,
  droppedIterations,
});

test('sent and dropped per second are the counters’ differences over the time between readings', () => {
  const cases: [LoadCounters, LoadCounters, ReturnType<typeof perSecond>][] = [
    // 80 requests in one second
    [counters(0, 100), counters(1000, 180), { sentPerSec: 80, droppedPerSec: 0 }],
    // a late poll: 120 requests in 1.5 s is 80/s, not a spike of 120
    [counters(0, 100, 2), counters(1500, 220, 5), { sentPerSec: 80, droppedPerSec: 2 }],
    // readings out of order, or a restarted generator: nothing
    [counters(1000, 100), counters(1000, 180), undefined],
    [counters(0, 500), counters(1000, 20), undefined],
  ];
  for (const [before, after, expected] of cases) assert.deepEqual(perSecond(before, after), expected);
});

const liveReport: ServerLiveReport = {
  kind: 'plateau.server-live',
  schemaVersion: 1,
  generatedMs: 0,
  step: 'r080',
  checkedOut: 4,
  waiting: 31,
  last: {
    t: 0,
    step: 'r080',
    served: 66,
    shed: 2,
    answered: 68,
    checkedOutMean: 3.98,
    waitingMean: 29.5,
    waitingMax: 35,
    cpuPct: 57.1,
    handlerP95Ms: 487.3,
  },
};

test('a snapshot takes the plan’s step and rate, the generator’s sent and drops, the service’s second', () => {
  const snapshot = progressFromSample(
    { server: liveReport, load: { sentPerSec: 80, droppedPerSec: 1, vus: 12 } },
    { step: 'r080', offeredPerSec: 80, secondsLeft: 12, poolMax: 4 },
  );
  assert.deepEqual(snapshot, {
    phase: 'load',
    step: 'r080',
    secondsLeft: 12,
    offeredPerSec: 80,
    sentPerSec: 80,
    droppedPerSec: 1,
    servedPerSec: 66,
    shedPerSec: 2,
    p95Ms: 487.3,
    checkedOut: 3.98,
    waiting: 29.5,
    poolMax: 4,
  });
  // Nothing answered: the plan alone.
  assert.deepEqual(progressFromSample({}, { step: 'r020', offeredPerSec: 20, secondsLeft: 50 }), {
    phase: 'load',
    step: 'r020',
    offeredPerSec: 20,
    secondsLeft: 50,
  });
});

test('the step is the service’s when it says, else the plan’s for the time the generator has run', () => {
  const plan = {
    steps: [20, 40],
    holdSeconds: 10,
    rampSeconds: 2,
    recoveryRatePerSec: 10,
    recoverySeconds: 10,
    target: undefined,
  } as unknown as StudyPlan;
  // 30 s in all; the generator started its scenarios at 5 s (after it was spawned at 0)
  const cases: {
    name: string;
    sample: Parameters<typeof plannedNow>[1];
    nowMs: number;
    step: string;
    offered: number;
    left: number;
  }[] = [
    { name: 'before it runs: from the spawn', sample: {}, nowMs: 3000, step: 'r020', offered: 20, left: 27 },
    {
      name: 'running for 12 s: the second step',
      sample: { runningSinceMs: 5000 },
      nowMs: 17_000,
      step: 'r040',
      offered: 40,
      left: 18,
    },
    {
      name: 'past the ramp: drain at the recovery rate',
      sample: { runningSinceMs: 5000 },
      nowMs: 26_000,
      step: 'drain',
      offered: 10,
      left: 9,
    },
    {
      name: 'the service says r020 still',
      sample: {
        runningSinceMs: 5000,
        server: { ...liveReport, last: { ...liveReport.last!, step: 'r020' } },
      },
      nowMs: 17_000,
      step: 'r020',
      offered: 20,
      left: 18,
    },
  ];
  for (const { name, sample, nowMs, step, offered, left } of cases) {
    const now = plannedNow(plan, sample, 0, 4, nowMs);
    assert.deepEqual(now, { step, offeredPerSec: offered, secondsLeft: left, poolMax: 4 }, name);
  }
});

/** A server answering each path with `answer(path)`, [status, body], on a free port. */
async function fakeServer(answer: (path: string) => [number, unknown]) {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url!);
    const [status, body] = answer(req.url!);
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () => server.close(),
  };
}

const NOT_FOUND = {
  errors: [{ status: '404', title: 'Not Found', detail: 'No metric with that ID was found' }],
};

test("both sides are read; k6's 404 for a metric without samples is zero; a service without /steps/live is asked once", async () => {
  let reqs = 100;
  // k6 v0.49's answers (test/real-k6.test.ts checks the engine gives the same shapes).
  const api = await fakeServer((path) => {
    if (path === '/v1/status')
      return [
        200,
        {
          data: {
            type: 'status',
            id: 'default',
            attributes: {
              status: 7,
              paused: false,
              vus: 3,
              'vus-max': 10,
              stopped: false,
              running: true,
              tainted: false,
            },
          },
        },
      ];
    if (path === '/v1/metrics/http_reqs')
      return [
        200,
        {
          data: {
            type: 'metrics',
            id: 'http_reqs',
            attributes: {
              type: 'counter',
              contains: 'default',
              tainted: null,
              sample: { count: reqs, rate: 1 },
            },
          },
        },
      ];
    return [404, NOT_FOUND]; // dropped_iterations: none dropped yet
  });
  const service = await fakeServer(() => [404, 'Not Found']); // no /steps/live
  let now = 0;
  try {
    const figures = new LiveFigures({ serviceUrl: service.url, load: new LoadApiClient(api.url, () => now) });
    const first = await figures.sample();
    assert.equal(first.load, undefined, 'one reading gives no rate yet');
    assert.equal(first.runningSinceMs, 0);
    now = 1000;
    reqs = 180;
    const second = await figures.sample();
    assert.deepEqual(second.load, { sentPerSec: 80, droppedPerSec: 0, vus: 3 });
    assert.equal(second.server, undefined);
    assert.equal(service.hits.filter((h) => h === '/steps/live').length, 1, 'a 404 stops the polling');
    assert.ok(
      !api.hits.includes('/v1/metrics'),
      'never the whole list, whose trends cost the generator a sort',
    );
  } finally {
    api.close();
    service.close();
  }
});
