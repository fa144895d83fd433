// Thresholds, script errors and aborts end an engine run with k6's exit codes.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { runScript, writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

const oneShot = (url: string, options: string, body = '') => `
import http from 'k6/http';
import exec from 'k6/execution';
import { check, group } from 'k6';
export const options = ${options};
export default async function () {
  ${body}
  await http.asyncRequest('GET', '${url}/');
}`;

test('thresholds that hold exit 0; crossed ones exit 99 and are marked failed in the export', async () => {
  const server = await startTestServer({ delayMs: 30 });
  const pass = await runScript(
    await writeScript(
      oneShot(
        server.url,
        "{ iterations: 3, thresholds: { http_req_duration: ['p(95)<5000'], http_reqs: ['count==3'] } }",
      ),
    ),
  );
  assert.equal(pass.exitCode, 0, pass.logs.join('\n'));
  assert.deepEqual(pass.exported?.metrics.http_req_duration?.thresholds, { 'p(95)<5000': false });
  const fail = await runScript(
    await writeScript(
      oneShot(server.url, "{ iterations: 3, thresholds: { http_req_duration: ['p(95)<1'] } }"),
    ),
  );
  assert.equal(fail.exitCode, 99);
  assert.deepEqual(
    fail.exported?.metrics.http_req_duration?.thresholds,
    { 'p(95)<1': true },
    'true means failed',
  );
  assert.match(fail.stdout, /✗ 'p\(95\)<1'/);
});

test('sub-metric thresholds select by tag; an empty one still passes at the end', async () => {
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
export const options = { iterations: 2, thresholds: {
  'http_reqs{step:a}': ['count==2'], 'http_req_failed{step:nothing}': ['rate<0.01'], 'http_req_duration{step:nothing}': ['p(95)<1'] } };
export default async function () { await http.asyncRequest('GET', '${server.url}/', null, { tags: { step: 'a' } }); }`),
  );
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  assert.deepEqual(run.exported?.metrics['http_reqs{step:a}']?.count, 2);
});

test('abortOnFail stops the test early with exit 99', async () => {
  const server = await startTestServer({ status: 500 });
  const run = await runScript(
    await writeScript(
      oneShot(
        server.url,
        "{ scenarios: { s: { executor: 'constant-arrival-rate', rate: 20, duration: '20s', preAllocatedVUs: 5 } }, thresholds: { http_req_failed: [{ threshold: 'rate<0.1', abortOnFail: true }] } }",
      ),
    ),
  );
  assert.equal(run.exitCode, 99);
  // 20 starts a second for 20 s is 400; a few evaluation periods send a few dozen. Counted
  // by the engine's own clock, not the wall's, which also times a loaded machine's start.
  assert.ok(
    server.requests.length < 200,
    `stopped within a few evaluation periods, not after 20 s: ${server.requests.length} requests`,
  );
  assert.match(run.reason, /rate<0\.1/);
});

test('invalid thresholds or options exit 104 before any request', async () => {
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(
      oneShot(
        server.url,
        "{ iterations: 1, thresholds: { http_req_failed: ['p(95)<1'], no_such_metric: ['count>0'] } }",
      ),
    ),
  );
  assert.equal(run.exitCode, 104);
  assert.equal(server.requests.length, 0);
  assert.ok(
    run.logs.some((l) => l.includes('no_such_metric') && l.includes('p(95)')),
    run.logs.join('\n'),
  );
});

test('an exception in init, setup or teardown exits 107; one inside an iteration is logged only', async () => {
  const server = await startTestServer();
  const init = await runScript(
    await writeScript(`throw new Error('bad init');\nexport default function () {}`),
  );
  assert.equal(init.exitCode, 107);
  assert.match(init.reason, /bad init/);
  const setup = await runScript(
    await writeScript(
      `${oneShot(server.url, '{ iterations: 1 }')}\nexport function setup() { throw new Error('bad setup'); }`,
    ),
  );
  assert.equal(setup.exitCode, 107);
  assert.equal(server.requests.length, 0, 'no iteration ran after setup failed');
  const teardown = await runScript(
    await writeScript(
      `${oneShot(server.url, '{ iterations: 1 }')}\nexport function teardown() { throw new Error('bad teardown'); }`,
    ),
  );
  assert.equal(teardown.exitCode, 107);
  const inside = await runScript(
    await writeScript(
      oneShot(
        server.url,
        '{ iterations: 2 }',
        "if (exec.scenario.iterationInTest === 0) throw new Error('bad iteration');",
      ),
    ),
  );
  assert.equal(inside.exitCode, 0);
  assert.ok(inside.logs.some((l) => l.includes('bad iteration')));
  assert.equal(
    inside.rows.filter((r) => r.metric_name === 'iterations').length,
    2,
    'a throwing iteration is still a full one',
  );
});

test('exec.test.abort() exits 108; exec.test.fail() lets the run finish and exits 110', async () => {
  const server = await startTestServer();
  const aborted = await runScript(
    await writeScript(
      oneShot(
        server.url,
        '{ iterations: 50, vus: 1 }',
        "if (exec.scenario.iterationInTest === 2) exec.test.abort('enough');",
      ),
    ),
  );
  assert.equal(aborted.exitCode, 108);
  assert.ok(server.requests.length <= 3);
  const failed = await runScript(
    await writeScript(oneShot(server.url, '{ iterations: 2 }', "exec.test.fail('marked');")),
  );
  assert.equal(failed.exitCode, 110);
  assert.equal(failed.rows.filter((r) => r.metric_name === 'iterations').length, 2);
});

test('a request timeout is status 0 with error_code 1050; a refused connection is 1212', async () => {
  const server = await startTestServer({ delayMs: 2000 });
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () {
  const slow = await http.asyncRequest('GET', '${server.url}/', null, { timeout: '200ms', tags: { which: 'slow' } });
  if (slow.error_code !== 1050 || slow.status !== 0) throw new Error('unexpected ' + slow.error_code);
  await http.asyncRequest('GET', 'http://127.0.0.1:1/', null, { tags: { which: 'refused' } });
}`),
  );
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const reqs = run.rows.filter((r) => r.metric_name === 'http_reqs');
  const slow = reqs.find((r) => r.extra_tags === 'which=slow');
  const refused = reqs.find((r) => r.extra_tags === 'which=refused');
  assert.deepEqual(
    [slow?.status, slow?.error_code, slow?.error, slow?.expected_response],
    ['0', '1050', 'request timeout', 'false'],
  );
  assert.deepEqual(
    [refused?.status, refused?.error_code, refused?.error],
    ['0', '1212', 'dial: connection refused'],
  );
  const failed = run.rows.filter((r) => r.metric_name === 'http_req_failed').map((r) => r.metric_value);
  assert.deepEqual(failed, ['1.000000', '1.000000']);
});

test('HTTP statuses ≥ 400 get error_code 1000 + status, from asyncRequest and from the blocking http.get alike', async () => {
  const server = await startTestServer({ status: 404 });
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () {
  await http.asyncRequest('GET', '${server.url}/');
  http.get('${server.url}/');
}`),
  );
  const rows = run.rows.filter((r) => r.metric_name === 'http_reqs');
  assert.equal(rows.length, 2, 'the blocking http.get was waited for before the iteration ended');
  for (const row of rows) assert.deepEqual([row.status, row.error_code, row.error], ['404', '1404', '']);
});

test('checks and groups: tags, the root_group tree and their summary', async () => {
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
import { check, group } from 'k6';
export const options = { iterations: 2 };
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/');
  group('outer', () => { check(res, { 'status is 200': (r) => r.status === 200, 'never': () => false }); });
}`),
  );
  const checks = run.rows.filter((r) => r.metric_name === 'checks');
  assert.equal(checks.length, 4);
  assert.deepEqual(new Set(checks.map((r) => r.group)), new Set(['::outer']));
  assert.equal(run.rows.filter((r) => r.metric_name === 'group_duration' && r.group === '::outer').length, 2);
  const root = run.exported?.root_group as {
    groups: Record<string, { checks: Record<string, { passes: number; fails: number; id: string }> }>;
  };
  assert.deepEqual(
    {
      passes: root.groups.outer?.checks['status is 200']?.passes,
      fails: root.groups.outer?.checks.never?.fails,
    },
    { passes: 2, fails: 2 },
  );
  // Check ids are the hex MD5 of their path, as in k6.
  const expectedId = createHash('md5').update('::outer::status is 200').digest('hex');
  assert.equal(root.groups.outer?.checks['status is 200']?.id, expectedId);
});

test('handleSummary replaces the text summary and writes its files', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 1 };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }
export function handleSummary(data) {
  return { stdout: 'custom ' + data.metrics.http_reqs.values.count + '\\n', [__ENV.OUT]: JSON.stringify(data.state) };
}`);
  const out = `${script}.state.json`;
  const run = await runScript(script, { env: { OUT: out } });
  assert.equal(run.stdout, 'custom 1\n');
  const state = JSON.parse(await (await import('node:fs/promises')).readFile(out, 'utf8'));
  assert.ok(state.testRunDurationMs > 0);
});

test('setup or teardown past its timeout exits 100 or 101, as k6', async () => {
  const slow = (hook: 'setup' | 'teardown') =>
    writeScript(`
import { sleep } from 'k6';
export const options = { ${hook}Timeout: '300ms', iterations: 1 };
export async function ${hook}() { await sleep(2); }
export default function () {}`);
  const setup = await runScript(await slow('setup'));
  assert.equal(setup.exitCode, 100, setup.logs.join('\n'));
  assert.ok(
    setup.logs.some((line) =>
      line.includes('setup() did not finish within 0.3s (raise options.setupTimeout)'),
    ),
  );
  const teardown = await runScript(await slow('teardown'));
  assert.equal(teardown.exitCode, 101, teardown.logs.join('\n'));
});

test('options.throw (and --throw): a failed request throws in the script instead of warning; 4xx does not', async () => {
  const server = await startTestServer({ status: 404 });
  const source = (throwOption: string) => `
import http from 'k6/http';
export const options = { iterations: 1${throwOption} };
export default async function () {
  const missing = await http.asyncRequest('GET', '${server.url}/');
  if (missing.status !== 404) throw new Error('a 4xx is a response, not an error');
  try {
    await http.asyncRequest('GET', 'http://127.0.0.1:1/', null, { tags: { which: 'refused' } });
    console.log('returned');
  } catch (error) {
    console.log('caught: ' + error.message);
  }
}`;
  const warned = await runScript(await writeScript(source('')));
  assert.equal(warned.exitCode, 0, warned.logs.join('\n'));
  assert.ok(warned.logs.some((line) => line.includes('returned')));
  assert.ok(warned.logs.some((line) => line.includes('Request Failed')));

  for (const run of [
    await runScript(await writeScript(source(', throw: true'))),
    await runScript(await writeScript(source('')), { overrides: { throw: true } }),
  ]) {
    assert.equal(run.exitCode, 0, run.logs.join('\n'));
    assert.ok(
      run.logs.some((line) =>
        line.includes('caught: GET http://127.0.0.1:1/: dial: connection refused (error_code 1212)'),
      ),
      run.logs.join('\n'),
    );
    assert.ok(!run.logs.some((line) => line.includes('Request Failed')), 'it throws instead of warning');
    // The failed request is still measured, as in k6.
    const refused = run.rows.find((r) => r.metric_name === 'http_reqs' && r.extra_tags === 'which=refused');
    assert.equal(refused?.error_code, '1212');
  }
});

test('group() and check() refuse an async function before running it, as k6 does', async () => {
  const server = await startTestServer();
  const run = await runScript(
    await writeScript(`
import http from 'k6/http';
import { check, group } from 'k6';
export const options = { iterations: 2 };
export default async function () {
  const which = __ITER === 0 ? 'group' : 'check';
  if (which === 'group') group('g', async function () { await http.asyncRequest('GET', '${server.url}/in-group'); });
  else check(1, { 'async': async function () { await http.asyncRequest('GET', '${server.url}/in-check'); return true; } });
}`),
  );
  assert.equal(run.exitCode, 0, 'an iteration error does not fail the test');
  assert.equal(server.requests.length, 0, 'neither async body ran');
  const errors = run.logs.filter((l) => /does not support async functions/.test(l));
  assert.equal(errors.length, 2, run.logs.join('\n'));
});
