import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import type { ConfigProblem } from '../contract/index.ts';
import { EXECUTION_STATUS, parseRestAddress, type RestAddress, runSource, startRestApi } from './rest-api.ts';
import { TestInstance } from './test-instance.ts';

test('--address is read as k6 takes it, host:port', () => {
  const cases: [string, RestAddress | undefined][] = [
    ['localhost:6565', { host: 'localhost', port: 6565 }], // k6's default
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }], // any free port
    [':6565', { host: '', port: 6565 }], // every interface
    ['[::1]:6565', { host: '::1', port: 6565 }], // IPv6 in brackets
    ['localhost', undefined], // no port
    ['localhost:70000', undefined], // past 65535
    ['localhost:65x', undefined], // not a number
    ['::1:6565', undefined], // IPv6 without brackets is ambiguous
  ];
  for (const [text, expected] of cases) {
    const problems: ConfigProblem[] = [];
    assert.deepEqual(parseRestAddress(text, problems), expected, text);
    assert.equal(problems.length, expected ? 0 : 1, text);
    if (!expected) assert.match(problems[0]!.message, /is not host:port/);
  }
});

// biome-ignore lint/suspicious/noExplicitAny: the answers' shapes are what the test asserts.
type Json = any;
const getJson = async (url: string, method = 'GET') => {
  const res = await request(url, { method });
  return { status: res.statusCode, body: (await res.body.json()) as Json };
};

test("the API answers /v1/status and the metrics that have samples, in k6's JSON:API shape", async () => {
  const instance = new TestInstance({
    logger: { log: () => undefined },
    env: {},
    scriptOptions: () => undefined,
  });
  const { runtime, registry } = instance;
  let status: (typeof EXECUTION_STATUS)[keyof typeof EXECUTION_STATUS] = EXECUTION_STATUS.initDone;
  const api = await startRestApi(
    { host: '127.0.0.1', port: 0 },
    runSource({ registry, runtime, status: () => status }),
  );
  try {
    const base = `http://127.0.0.1:${api.address.port}`;
    runtime.markStarted();
    status = EXECUTION_STATUS.running;
    runtime.vusActive = 2;
    runtime.vusInitialized = 5;
    for (let i = 0; i < 3; i++) runtime.emitBuiltin('http_reqs', 1, {});
    runtime.emitBuiltin('http_req_duration', 10, { expected_response: 'true' });
    runtime.emitBuiltin('http_req_duration', 30, { expected_response: 'true' });

    const state = await getJson(`${base}/v1/status`);
    assert.deepEqual(state.body, {
      data: {
        type: 'status',
        id: 'default',
        attributes: {
          status: 7,
          paused: false,
          vus: 2,
          'vus-max': 5,
          stopped: false,
          running: true,
          tainted: false,
        },
      },
    });

    const reqs = await getJson(`${base}/v1/metrics/http_reqs`);
    assert.equal(reqs.status, 200);
    const { sample, ...rest } = reqs.body.data.attributes;
    assert.deepEqual(rest, { type: 'counter', contains: 'default', tainted: null });
    assert.equal(sample.count, 3);
    assert.ok(sample.rate > 0, 'rate per second of test time');
    assert.equal(reqs.body.data.id, 'http_reqs');

    // No drop yet: k6 answers 404 for a metric without samples.
    const dropped = await getJson(`${base}/v1/metrics/dropped_iterations`);
    assert.equal(dropped.status, 404);
    assert.deepEqual(dropped.body, {
      errors: [{ status: '404', title: 'Not Found', detail: 'No metric with that ID was found' }],
    });

    const all = await getJson(`${base}/v1/metrics`);
    const ids = (all.body.data as { id: string }[]).map((m) => m.id).sort();
    assert.deepEqual(ids, ['http_req_duration', 'http_req_duration{expected_response:true}', 'http_reqs']);
    const trend = (all.body.data as { id: string; attributes: { sample: Record<string, number> } }[]).find(
      (m) => m.id === 'http_req_duration',
    );
    assert.deepEqual(Object.keys(trend!.attributes.sample).sort(), [
      'avg',
      'max',
      'med',
      'min',
      'p(90)',
      'p(95)',
    ]);
    assert.equal(trend!.attributes.sample.med, 20);

    assert.equal((await getJson(`${base}/v1/status`, 'PATCH')).status, 405, 'read-only');
  } finally {
    await api.close();
    await instance.close();
  }
});

test('a port that is taken rejects (runTest turns it into exit 106, as k6)', async () => {
  const instance = new TestInstance({
    logger: { log: () => undefined },
    env: {},
    scriptOptions: () => undefined,
  });
  const source = runSource({
    registry: instance.registry,
    runtime: instance.runtime,
    status: () => EXECUTION_STATUS.created,
  });
  const first = await startRestApi({ host: '127.0.0.1', port: 0 }, source);
  try {
    await assert.rejects(startRestApi({ host: '127.0.0.1', port: first.address.port }, source), /EADDRINUSE/);
  } finally {
    await first.close();
    await instance.close();
  }
});
