// The reference statement API against a real embedded PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { ServerStepReport } from '../contract/index.ts';
import { renderStatement } from '../target-service/statement.ts';
import { fetchText } from './helpers/http.ts';
import { useStatementServices } from './helpers/service.ts';

const startService = useStatementServices();

test('GET /statement answers 200 with a gzip statement of ~88 KB, the same for the same account', async () => {
  const service = await startService();
  const first = await fetchText(`${service.url}/statement?account=1234`);
  const second = await fetchText(`${service.url}/statement?account=1234`);
  assert.equal(first.status, 200);
  assert.equal(first.headers['content-encoding'], 'gzip');
  assert.equal(first.text, renderStatement(1234, 88));
  assert.ok(Buffer.byteLength(first.text) >= 88 * 1024);
  assert.equal(second.text, first.text);
});

test('bad accounts get 400 with a JSON error, never a 500', async () => {
  const service = await startService();
  const bad = [
    '',
    'abc',
    '-1',
    '1000000000',
    '1.5',
    '1e3',
    '%00',
    '%F0%9F%92%A5',
    'x'.repeat(5000),
    '42&account=43',
  ];
  for (const value of bad) {
    const res = await fetchText(`${service.url}/statement?account=${value}`);
    assert.equal(res.status, value === '42&account=43' ? 200 : 400, `account=${value.slice(0, 20)}`);
    if (res.status === 400) assert.equal(JSON.parse(res.text).error, 'bad_request');
  }
  const missing = await fetchText(`${service.url}/statement`);
  assert.equal(missing.status, 400);
  const post = await fetchText(`${service.url}/statement?account=1`, {}, 'POST');
  assert.equal(post.status, 405);
  const unknown = await fetchText(`${service.url}/nope`);
  assert.equal(unknown.status, 404);
});

test('requests tagged r020 and r040 land in separate buckets; hostile tags are bounded', async () => {
  const service = await startService({ queryMs: 1, payloadKb: 1 });
  await fetchText(`${service.url}/steps/reset`, {}, 'POST');
  for (let i = 0; i < 3; i++)
    await fetchText(`${service.url}/statement?account=${i}`, { 'x-load-step': 'r020' });
  for (let i = 0; i < 2; i++)
    await fetchText(`${service.url}/statement?account=${i}`, { 'x-load-step': 'r040' });
  for (const hostile of ['../../etc/passwd', 'x'.repeat(33), 'r020;drop', '<b>']) {
    await fetchText(`${service.url}/statement?account=1`, { 'x-load-step': hostile });
  }
  await fetchText(`${service.url}/statement?account=1`);
  const report = JSON.parse((await fetchText(`${service.url}/steps`)).text) as ServerStepReport;
  assert.equal(report.kind, 'plateau.server-steps');
  assert.equal(report.schemaVersion, 2);
  const byStep = new Map(report.steps.map((s) => [s.step, s]));
  assert.deepEqual([...byStep.keys()], ['r020', 'r040', 'invalid', 'untagged']);
  assert.equal(byStep.get('r020')?.served, 3);
  assert.equal(byStep.get('r040')?.served, 2);
  assert.equal(byStep.get('invalid')?.requests, 4);
  assert.equal(byStep.get('r020')?.queryMs.count, 3, 'each query timed and attributed to its step');
  assert.equal(byStep.get('r020')?.waitMs.count, 3);
  assert.equal(byStep.get('r020')?.databaseMs?.count, 3, "the database's own time, from the query's result");
  assert.ok((byStep.get('r020')?.databaseMs?.p50 ?? 0) >= 1, 'QUERY_MS=1 runs at least 1 ms in the database');
  // Served by window: completions count in the step current when they finish. r040 stays
  // current through the hostile and untagged requests, so its window holds their 200s too.
  assert.equal(byStep.get('r020')?.window?.served, 3);
  assert.equal(byStep.get('r040')?.window?.served, 2 + 4 + 1);
  assert.deepEqual(report.settings, {
    poolMax: 4,
    queueMax: 8,
    acquireTimeoutMs: 200,
    shed: true,
    extra: { queryMs: 1, payloadKb: 1, renderFirst: false, deadlines: false, cpuMs: 0, admission: false },
  });
});

test('the 257th distinct step tag lands in overflow', async () => {
  const service = await startService({ queryMs: 0, payloadKb: 1 });
  await fetchText(`${service.url}/steps/reset`, {}, 'POST');
  // Bad accounts are answered without the database, but still counted in their step.
  for (let i = 0; i < 258; i++)
    await fetchText(`${service.url}/statement?account=bad`, { 'x-load-step': `t${i}` });
  const report = JSON.parse((await fetchText(`${service.url}/steps`)).text) as ServerStepReport;
  assert.equal(report.steps.length, 257);
  assert.equal(report.steps.at(-2)?.step, 't255');
  assert.equal(report.steps.at(-1)?.step, 'overflow');
  assert.equal(report.steps.at(-1)?.requests, 2);
});

test('GET /metrics parses as Prometheus text with the pool, saturation, shed and duration series', async () => {
  const service = await startService({ queryMs: 1, payloadKb: 1 });
  await fetchText(`${service.url}/statement?account=1`);
  const res = await fetchText(`${service.url}/metrics`);
  assert.equal(res.status, 200);
  assert.match(String(res.headers['content-type']), /text\/plain/);
  const families = parsePrometheusTextFormat(res.text);
  const names = families.map((f) => f.name);
  for (const name of [
    'db_pool_connections_total',
    'db_pool_connections_idle',
    'db_pool_connections_in_use',
    'db_pool_waiting_requests',
    'db_pool_saturated_total',
    'http_requests_shed_total',
    'http_request_duration_seconds',
  ]) {
    assert.ok(names.includes(name), `${name} is exposed`);
  }
  const total = families.find((f) => f.name === 'db_pool_connections_total');
  assert.equal(
    (total?.metrics[0] as { value: string } | undefined)?.value,
    '4',
    'the pool was warmed to POOL_MAX',
  );
  assert.equal(families.find((f) => f.name === 'http_request_duration_seconds')?.type, 'HISTOGRAM');
});

test('GET /healthz answers ok', async () => {
  const service = await startService();
  const res = await fetchText(`${service.url}/healthz`);
  assert.equal(res.status, 200);
  assert.deepEqual(JSON.parse(res.text), { status: 'ok' });
});
