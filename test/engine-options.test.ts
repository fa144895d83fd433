// k6 options that shape a run beyond its scenarios: minIterationDuration, rps, blocked
// destinations, summaryTimeUnit, handleSummaryTimeout, and the warnings for options the
// engine does not apply.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runScript, writeScript } from './helpers/engine.ts';
import { startTestServer } from './helpers/test-server.ts';

/** iteration_duration values (ms) of a run's CSV rows. */
function iterationDurations(rows: readonly Record<string, string>[]): number[] {
  return rows.filter((r) => r.metric_name === 'iteration_duration').map((r) => Number(r.metric_value));
}

test('minIterationDuration holds the VU for the rest of a short iteration, outside iteration_duration', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = {
  minIterationDuration: '300ms',
  scenarios: { one: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } },
};
export default async function () {
  console.log('iteration starts at ' + performance.now());
  await http.asyncRequest('GET', '${server.url}/');
  console.log('iteration ends at ' + performance.now());
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  assert.equal(server.requests.length, 3);
  // One VU: each next iteration starts only once the previous one's 300 ms are up (timed in
  // the script: the first request's dial makes the server's arrival times closer together).
  // The 300 ms run from the engine's start of the iteration, which the script's first line
  // follows by however long the machine makes it wait: on a saturated one ~12 ms once, so a
  // gap read from the script's lines can be that much short (287.6 then 302.9 ms were seen).
  // Without the option the gaps are a request's few milliseconds.
  const starts = run.logs.flatMap((l) => /iteration starts at ([\d.]+)/.exec(l)?.[1] ?? []).map(Number);
  assert.equal(starts.length, 3, run.logs.join('\n'));
  const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
  for (const gap of gaps) assert.ok(gap >= 250, `iterations ${gaps.join(', ')} ms apart`);
  assert.ok(starts[2]! - starts[0]! >= 550, `iterations ${gaps.join(', ')} ms apart`);
  // The wait is not part of the iteration (k6 emits the samples before it): an iteration
  // whose request was quick is under 290 ms, where the wait would make it 300. (On a machine
  // saturated by other suites one request once took 550 ms; such an iteration says nothing.)
  const ends = run.logs.flatMap((l) => /iteration ends at ([\d.]+)/.exec(l)?.[1] ?? []).map(Number);
  const durations = iterationDurations(run.rows);
  assert.equal(durations.length, 3);
  const quick = durations.filter((_, i) => ends[i]! - starts[i]! < 150);
  assert.ok(quick.length > 0, `iterations of ${ends.map((e, i) => e - starts[i]!).join(', ')} ms`);
  for (const ms of quick) assert.ok(ms < 290, `iteration_duration ${ms}`);
});

test('rps spaces requests across all VUs at 1/rps, in the order they asked', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = {
  rps: 20,
  scenarios: { many: { executor: 'shared-iterations', vus: 5, iterations: 10 } },
};
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  assert.equal(server.requests.length, 10);
  // Five VUs would send all ten in a few ms; at 20/s the tenth goes out 9 × 50 ms after the
  // first. The first five also dial (one connection per VU), so the last five, on open
  // connections, measure the spacing: 4 × 50 ms. Arrivals are timed at the server, where a
  // request delayed on the way (the busy machine of a full test run: 12 ms seen) shortens a
  // span, so each bound leaves tens of ms for that and still tells spaced from unspaced.
  const at = server.requests.map((r) => r.atMs);
  assert.ok(at[9]! - at[0]! >= 380, `10 requests within ${(at[9]! - at[0]!).toFixed(0)} ms`);
  assert.ok(at[9]! - at[5]! >= 150, `requests 6-10 within ${(at[9]! - at[5]!).toFixed(0)} ms`);
  // The wait comes before the request: http_req_duration does not include it. Were it
  // included, the last request's duration would hold its ~450 ms wait, as long as the whole
  // span the server saw; without it every duration is a request's own (a few ms, a first
  // request's dial ~100 ms on the saturated machine of a full run), well under half the span.
  const durations = run.rows
    .filter((r) => r.metric_name === 'http_req_duration')
    .map((r) => Number(r.metric_value));
  const span = at[9]! - at[0]!;
  assert.ok(
    Math.max(...durations) < span / 2,
    `http_req_duration ${durations.join(', ')} against a span of ${span.toFixed(0)} ms`,
  );
});

test('blockHostnames and blacklistIPs refuse requests with k6 errors 1111 and 1110, before they reach the server', async () => {
  const server = await startTestServer();
  const port = new URL(server.url).port;
  const script = await writeScript(`
import http from 'k6/http';
export const options = {
  iterations: 1,
  blockHostnames: ['*.blocked.test'],
  blacklistIPs: ['127.0.0.0/8', '::1/128'],
};
export default async function () {
  const byName = await http.asyncRequest('GET', 'http://api.blocked.test:${port}/');
  const byAddress = await http.asyncRequest('GET', 'http://127.0.0.1:${port}/');
  const resolved = await http.asyncRequest('GET', 'http://localhost:${port}/');
  console.log(JSON.stringify([byName, byAddress, resolved].map((r) => [r.status, r.error_code, r.error])));
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const line = run.logs.find((l) => l.startsWith('info [['));
  assert.ok(line, run.logs.join('\n'));
  const [byName, byAddress, resolved] = JSON.parse(line.slice('info '.length, line.lastIndexOf(']]') + 2));
  assert.deepEqual(byName, [0, 1111, 'hostname (api.blocked.test) is in a blocked pattern (*.blocked.test)']);
  assert.deepEqual(byAddress, [0, 1110, 'IP (127.0.0.1) is in a blacklisted range (127.0.0.0/8)']);
  // A name is checked once resolved (localhost: 127.0.0.1 or ::1, both refused here).
  assert.equal(resolved[0], 0);
  assert.equal(resolved[1], 1110);
  assert.equal(server.requests.length, 0);
  const failed = run.rows.filter((r) => r.metric_name === 'http_reqs').map((r) => r.error_code);
  assert.deepEqual(failed, ['1111', '1110', '1110']);
});

test('summaryTimeUnit shows every time in one unit; a unit the summary does not know exits 104', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
export const options = { iterations: 2, summaryTimeUnit: __ENV.UNIT };
export default async function () { await http.asyncRequest('GET', '${server.url}/'); }`);
  const micro = await runScript(script, { env: { UNIT: 'us' } });
  assert.equal(micro.exitCode, 0, micro.logs.join('\n'));
  const line = micro.stdout.split('\n').find((l) => l.includes('http_req_duration'));
  assert.match(line ?? '', /avg=[\d.]+µs +min=[\d.]+µs +med=[\d.]+µs +max=[\d.]+µs +p\(90\)=[\d.]+µs/);
  const seconds = await runScript(script, { env: { UNIT: 's' } });
  assert.match(seconds.stdout, /iteration_duration\.*: avg=0\.\d\ds +min=/);
  const bad = await runScript(script, { env: { UNIT: 'minutes' } });
  assert.equal(bad.exitCode, 104);
  assert.match(bad.logs.join('\n'), /summaryTimeUnit.*"minutes".*use s, ms, us/s);
});

test('handleSummaryTimeout: a handleSummary that does not finish in time is an error, and the default summary is printed', async () => {
  const script = await writeScript(`
export const options = { iterations: 1, handleSummaryTimeout: '200ms' };
export default function () {}
export function handleSummary() { return new Promise(() => {}); }`);
  const started = Date.now();
  const run = await runScript(script);
  assert.ok(Date.now() - started < 10_000);
  assert.match(run.logs.join('\n'), /handleSummary\(\) failed: .*did not finish within 0\.2s/);
  assert.match(run.stdout, /TOTAL RESULTS/);
});

test('options the engine does not apply, and names k6 does not know, are warned about before the run', async () => {
  const script = await writeScript(`
export const options = {
  iterations: 1,
  dns: { ttl: '1m', select: 'first', policy: 'preferIPv4' },
  batchPerHost: 6,
  treshholds: { http_req_failed: ['rate<0.01'] },
  cloud: { projectID: 1 },
  ext: { loadimpact: {} },
};
export default function () {}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const warnings = run.logs.filter((l) => l.startsWith('warning'));
  assert.ok(
    warnings.some((w) => /options\.dns is not applied by the embedded engine: .*system resolver/.test(w)),
  );
  assert.ok(warnings.some((w) => /options\.batchPerHost is not applied.*http\.batch/.test(w)));
  assert.ok(warnings.some((w) => /options\.treshholds is not a k6 option.*spelling/.test(w)));
  // Cloud settings change nothing in a local run: no noise about them.
  assert.ok(!warnings.some((w) => /options\.(cloud|ext)\b/.test(w)), warnings.join('\n'));
});

test('systemTags chooses the tags samples carry: CSV columns follow it, vu and iter go to metadata', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import { check } from 'k6';
export const options = {
  systemTags: ['status', 'method', 'url', 'ip', 'check', 'vu', 'iter'],
  scenarios: { two: { executor: 'per-vu-iterations', vus: 1, iterations: 2, tags: { team: 'a' } } },
};
export default async function () {
  const res = await http.asyncRequest('GET', '${server.url}/item', null, { tags: { name: 'item' } });
  check(res, { ok: (r) => r.status === 200 });
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const columns = Object.keys(run.rows[0] ?? {});
  // The enabled indexable tags, sorted, between the value and extra_tags (k6's header).
  assert.deepEqual(columns, [
    'metric_name',
    'timestamp',
    'metric_value',
    'check',
    'ip',
    'method',
    'status',
    'url',
    'extra_tags',
    'metadata',
  ]);
  const requests = run.rows.filter((r) => r.metric_name === 'http_reqs');
  assert.deepEqual(
    requests.map((r) => [r.ip, r.method, r.status, r.url, r.metadata]),
    [
      ['127.0.0.1', 'GET', '200', 'item', 'iter=0&vu=1'],
      ['127.0.0.1', 'GET', '200', 'item', 'iter=1&vu=1'],
    ],
  );
  // A custom tag named like a disabled system tag is the script's own: it stays (in extra_tags).
  assert.ok(
    requests.every((r) => (r.extra_tags ?? '').split('&').sort().join('&') === 'name=item&team=a'),
    requests[0]?.extra_tags,
  );
  const checks = run.rows.filter((r) => r.metric_name === 'checks');
  assert.deepEqual(
    checks.map((r) => [r.check, r.metadata]),
    [
      ['ok', 'iter=0&vu=1'],
      ['ok', 'iter=1&vu=1'],
    ],
  );
  // No scenario or group tag anywhere, and no expected_response sub-metric without its tag.
  assert.ok(run.rows.every((r) => !/(^|&)(scenario|group)=/.test(r.extra_tags ?? '')));
  assert.equal(run.exported?.metrics['http_req_duration{expected_response:true}'], undefined);
  assert.ok(run.exported?.metrics.http_req_duration);
});

test('systemTags: an unknown name exits 104; ocsp_status, which the engine does not record, is warned about', async () => {
  const script = await writeScript(`
export const options = { iterations: 1, systemTags: JSON.parse(__ENV.TAGS) };
export default function () {}`);
  const bad = await runScript(script, { env: { TAGS: '["status","statuz"]' } });
  assert.equal(bad.exitCode, 104);
  assert.match(bad.logs.join('\n'), /systemTags.*"statuz" is not a k6 system tag/s);
  const ocsp = await runScript(script, { env: { TAGS: '["status","ocsp_status"]' } });
  assert.equal(ocsp.exitCode, 0, ocsp.logs.join('\n'));
  assert.ok(
    ocsp.logs.some((l) => /^warning .*does not record ocsp_status/.test(l)),
    ocsp.logs.join('\n'),
  );
});

test('exec.vu.metrics.metadata goes with the VU’s samples from when it is set until it is deleted', async () => {
  const server = await startTestServer();
  const script = await writeScript(`
import http from 'k6/http';
import exec from 'k6/execution';
export const options = { scenarios: { one: { executor: 'per-vu-iterations', vus: 1, iterations: 3 } } };
export default async function () {
  if (exec.vu.iterationInInstance === 1) exec.vu.metrics.metadata.trace_id = 'abc-' + exec.vu.iterationInInstance;
  await http.asyncRequest('GET', '${server.url}/');
  delete exec.vu.metrics.metadata.trace_id;
}`);
  const run = await runScript(script);
  assert.equal(run.exitCode, 0, run.logs.join('\n'));
  const requests = run.rows.filter((r) => r.metric_name === 'http_reqs').map((r) => r.metadata);
  assert.deepEqual(requests, ['', 'trace_id=abc-1', '']);
  // Metadata is not a tag: it is not in extra_tags.
  assert.ok(run.rows.every((r) => !(r.extra_tags ?? '').includes('trace_id')));
});
