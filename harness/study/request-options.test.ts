import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ConfigProblem, SourcedValue } from '../../contract/index.ts';
import { planRequest, type RequestFlags, requestEnv, requestFlags } from './request-options.ts';

function plan(flags: RequestFlags, target?: string) {
  const problems: ConfigProblem[] = [];
  const sources: Record<string, SourcedValue> = {};
  const planned = planRequest(flags, target, problems, sources);
  return { ...planned, problems, sources };
}

test('without flags: the reference request, GET /statement?account=N', () => {
  const { request, baseUrl, problems } = plan({});
  assert.deepEqual(problems, []);
  assert.equal(baseUrl, undefined);
  assert.deepEqual(request, { method: 'GET', endpoint: null, headers: {}, expectStatus: null });
  assert.deepEqual(requestEnv(request, undefined), { METHOD: 'GET' }, 'the scripts keep their defaults');
});

test('a path in --target is the endpoint; an endpoint sends no account parameter', () => {
  const { request, baseUrl } = plan({}, 'http://127.0.0.1:8080/api/health?deep=1');
  assert.equal(baseUrl, 'http://127.0.0.1:8080');
  assert.equal(request.endpoint, '/api/health?deep=1');
  assert.deepEqual(requestEnv(request, undefined), {
    METHOD: 'GET',
    ENDPOINT: '/api/health?deep=1',
    ACCOUNTS: '0',
  });
});

test('a POST with a body file, headers and expected statuses, and its way back into flags for confirm', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'plateau-request-'));
  const file = join(dir, 'order.json');
  await writeFile(file, '{"sku":"a1"}');
  const flags: RequestFlags = {
    endpoint: '/orders',
    method: 'post',
    body: `@${file}`,
    header: ['Content-Type: application/json', 'X-Trace:  on '],
    expectStatus: '201,409',
  };
  const { request, problems, sources } = plan(flags, 'http://127.0.0.1:8080');
  assert.deepEqual(problems, []);
  assert.deepEqual(request, {
    method: 'POST',
    endpoint: '/orders',
    headers: { 'Content-Type': 'application/json', 'X-Trace': 'on' },
    body: { file },
    expectStatus: '201,409',
  });
  assert.deepEqual(requestEnv(request, undefined), {
    METHOD: 'POST',
    ENDPOINT: '/orders',
    ACCOUNTS: '0',
    HEADERS: '{"Content-Type":"application/json","X-Trace":"on"}',
    BODY_FILE: file,
    EXPECT_STATUS: '201,409',
  });
  assert.equal(sources['--method']?.source, 'flag');
  assert.deepEqual(
    plan(requestFlags(request), 'http://127.0.0.1:8080').request,
    request,
    'confirm rebuilds it',
  );
  const text = plan({ method: 'PUT', body: '{"a":1}' }).request;
  assert.deepEqual(text.body, { text: '{"a":1}' });
  assert.equal(requestEnv(text, '/runs/x/request-body').BODY_FILE, '/runs/x/request-body');
});

test('bad request flags name the flag and the form', () => {
  const { problems } = plan(
    {
      endpoint: 'orders',
      method: 'FETCH',
      header: ['no colon'],
      body: '@/does/not/exist.json',
      expectStatus: '2xx',
    },
    'http://127.0.0.1:8080',
  );
  assert.deepEqual(problems.map((p) => p.setting).sort(), [
    '--body',
    '--endpoint',
    '--expect-status',
    '--header',
    '--method',
  ]);
  const get = plan({ body: 'x' }).problems;
  assert.match(get[0]?.message ?? '', /a GET request carries no body/);
  assert.match(get[0]?.hint ?? '', /--method POST/);
  const twice = plan({ endpoint: '/b' }, 'http://127.0.0.1:8080/a').problems;
  assert.match(twice[0]?.hint ?? '', /give the path once/);
});
